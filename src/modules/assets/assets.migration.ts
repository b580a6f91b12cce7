import type { Kysely, Migration } from 'kysely';

export const assetsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('assets')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('title', 'varchar(200)')
      .addColumn('state', 'varchar(16)', (c) => c.notNull())
      .addColumn('progress', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('size_bytes', 'bigint', (c) => c.notNull())
      .addColumn('duration_ms', 'bigint')
      .addColumn('renditions', 'text')
      .addColumn('failure_reason', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('assets_workspace_created').on('assets').columns(['workspace_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('assets_state').on('assets').columns(['state']).execute();

    await db.schema
      .createTable('asset_jobs')
      .addColumn('asset_id', 'varchar(64)', (c) => c.primaryKey().references('assets.id').onDelete('cascade'))
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('queued_at', 'bigint', (c) => c.notNull())
      .addColumn('lease_owner', 'varchar(200)')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('asset_jobs_queue').on('asset_jobs').columns(['queued_at', 'asset_id']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('asset_jobs').execute();
    await db.schema.dropTable('assets').execute();
  },
};

/**
 * Whose turn it is to have a job claimed: each workspace's place in the round-robin of packaging
 * (the claim counter's value at its last claim), so one workspace's many uploads never keep
 * another's waiting behind them (finding N7).
 */
export const assetClaimTurnsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('asset_claim_turns')
      .addColumn('workspace_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('turn', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('asset_claim_turns').execute();
  },
};

/**
 * The bytes each asset keeps on disk, for the storage quota of its workspace: the upload until
 * it is packaged, then the packaged output (measured when packaging ends), nothing once failed.
 * Assets packaged before this column existed count their upload's size (the output is not
 * measured again).
 */
export const assetStoredBytesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('assets').addColumn('stored_bytes', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    const assets = db as unknown as Kysely<{ assets: { stored_bytes: number; size_bytes: number; state: string } }>;
    await assets.updateTable('assets').set((eb) => ({ stored_bytes: eb.ref('size_bytes') })).where('state', '!=', 'failed').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('assets').dropColumn('stored_bytes').execute();
  },
};

/**
 * Recorded live events: the slicer an asset was recorded from and the event's start and end
 * (Unix ms); null for uploads. Listed by slicer.
 */
export const assetRecordingsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('assets').addColumn('source_slicer_id', 'varchar(64)').execute();
    await db.schema.alterTable('assets').addColumn('recording_started_at', 'bigint').execute();
    await db.schema.alterTable('assets').addColumn('recording_ended_at', 'bigint').execute();
    await db.schema.createIndex('assets_workspace_slicer').on('assets').columns(['workspace_id', 'source_slicer_id']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('assets_workspace_slicer').execute();
    for (const column of ['recording_ended_at', 'recording_started_at', 'source_slicer_id']) await db.schema.alterTable('assets').dropColumn(column).execute();
  },
};

/** The asset library's migrations by name (0700-0799; 0701 is the playback edge's). */
export const assetMigrations: Record<string, Migration> = {
  '0700_assets': assetsMigration,
  '0702_asset_claim_turns': assetClaimTurnsMigration,
  '0710_asset_stored_bytes': assetStoredBytesMigration,
  '0703_asset_recordings': assetRecordingsMigration,
};
