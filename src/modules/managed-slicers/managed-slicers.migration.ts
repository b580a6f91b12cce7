import { PostgresAdapter, type Kysely, type Migration } from 'kysely';

const isPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

export const managedSlicersMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('managed_slicers')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('name', 'varchar(100)', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('region', 'varchar(64)', (c) => c.notNull())
      .addColumn('ingest_protocol', 'varchar(16)', (c) => c.notNull())
      .addColumn('output_profile', 'varchar(32)', (c) => c.notNull())
      .addColumn('state', 'varchar(16)', (c) => c.notNull())
      .addColumn('ingest_url', 'text')
      .addColumn('latest_task_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('managed_slicers_workspace_created')
      .on('managed_slicers')
      .columns(['workspace_id', 'created_at', 'id'])
      .execute();

    // The enqueue order needs a store-wide sequence: the one spot where the engines differ.
    const table = db.schema.createTable('managed_slicer_tasks');
    const withSeq = isPostgres(db)
      ? table.addColumn('seq', 'bigserial', (c) => c.primaryKey())
      : table.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement());
    await withSeq
      .addColumn('id', 'varchar(64)', (c) => c.notNull().unique())
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('slicer_id', 'varchar(64)', (c) => c.notNull().references('managed_slicers.id').onDelete('cascade'))
      .addColumn('operation', 'varchar(16)', (c) => c.notNull())
      .addColumn('state', 'varchar(16)', (c) => c.notNull())
      .addColumn('config', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('started_at', 'bigint')
      .addColumn('finished_at', 'bigint')
      .addColumn('failure_reason', 'text')
      .addColumn('lease_owner', 'varchar(200)')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('managed_slicer_tasks_workspace').on('managed_slicer_tasks').columns(['workspace_id', 'seq']).execute();
    await db.schema.createIndex('managed_slicer_tasks_slicer').on('managed_slicer_tasks').columns(['slicer_id', 'seq']).execute();
    await db.schema.createIndex('managed_slicer_tasks_state').on('managed_slicer_tasks').columns(['state', 'seq']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('managed_slicer_tasks').execute();
    await db.schema.dropTable('managed_slicers').execute();
  },
};

/**
 * Where a slicer's process runs (cluster mode): the instance holding its host lease, renewed
 * while the process runs there and taken over once expired; and the status that instance last
 * wrote, so every instance shows it.
 */
export const slicerHostsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('managed_slicers').addColumn('host_owner', 'varchar(200)').execute();
    await db.schema.alterTable('managed_slicers').addColumn('host_expires_at', 'bigint').execute();
    await db.schema.alterTable('managed_slicers').addColumn('live_status', 'text').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('managed_slicers').dropColumn('live_status').execute();
    await db.schema.alterTable('managed_slicers').dropColumn('host_expires_at').execute();
    await db.schema.alterTable('managed_slicers').dropColumn('host_owner').execute();
  },
};

/**
 * Each slicer's stream key, sealed by the SecretBox. Existing slicers keep null: a migration has
 * no server key to seal with, so the service makes their key the first time one is needed.
 */
export const slicerStreamKeysMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('managed_slicers').addColumn('stream_key_sealed', 'text').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('managed_slicers').dropColumn('stream_key_sealed').execute();
  },
};

/** Each slicer's DVR window (seconds); null for existing slicers, which take the deployment's default. */
export const slicerDvrWindowMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('managed_slicers').addColumn('dvr_window_s', 'integer').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('managed_slicers').dropColumn('dvr_window_s').execute();
  },
};

/** Whether each slicer records its live events into the library; null for existing slicers, which do (the default). */
export const slicerRecordMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('managed_slicers').addColumn('record', 'boolean').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('managed_slicers').dropColumn('record').execute();
  },
};

/** The managed slicers' migrations by name (0400-0499). */
export const managedSlicerMigrations: Record<string, Migration> = {
  '0400_managed_slicers': managedSlicersMigration,
  '0401_managed_slicer_hosts': slicerHostsMigration,
  '0402_managed_slicer_stream_keys': slicerStreamKeysMigration,
  '0403_managed_slicer_dvr_window': slicerDvrWindowMigration,
  '0404_managed_slicer_record': slicerRecordMigration,
};
