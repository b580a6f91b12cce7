import type { Kysely, Migration } from 'kysely';

export const playbackEdgeMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('playback_app_keys')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('name', 'varchar(64)', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('prefix', 'varchar(16)', (c) => c.notNull())
      .addColumn('secret_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .addUniqueConstraint('playback_app_keys_name_version', ['workspace_id', 'name', 'version'])
      .execute();
    await db.schema
      .createTable('playback_ad_configs')
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('name', 'varchar(64)', (c) => c.notNull())
      .addColumn('ad_server_url', 'varchar(2048)')
      .addColumn('slots', 'text', (c) => c.notNull())
      .addColumn('simulated_latency_ms', 'integer', (c) => c.notNull())
      .addColumn('timeout_ms', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('playback_ad_configs_pk', ['workspace_id', 'name'])
      .execute();
    await db.schema
      .createTable('playback_drm_policies')
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('name', 'varchar(64)', (c) => c.notNull())
      .addColumn('provider', 'varchar(16)', (c) => c.notNull())
      .addColumn('settings', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('playback_drm_policies_pk', ['workspace_id', 'name'])
      .execute();
    await db.schema
      .createTable('playback_private_assets')
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('asset_id', 'varchar(256)', (c) => c.notNull())
      .addColumn('shared_with', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('playback_private_assets_pk', ['workspace_id', 'asset_id'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('playback_private_assets').execute();
    await db.schema.dropTable('playback_drm_policies').execute();
    await db.schema.dropTable('playback_ad_configs').execute();
    await db.schema.dropTable('playback_app_keys').execute();
  },
};

/** Ad configurations name ad assets of the library (real preroll media) instead of synthetic slot durations. */
export const playbackAdAssetsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('playback_ad_configs').addColumn('ad_asset_ids', 'text', (c) => c.notNull().defaultTo('[]')).execute();
    await db.schema.alterTable('playback_ad_configs').dropColumn('slots').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('playback_ad_configs').addColumn('slots', 'text', (c) => c.notNull().defaultTo('[]')).execute();
    await db.schema.alterTable('playback_ad_configs').dropColumn('ad_asset_ids').execute();
  },
};

/**
 * Workspace-level shares ('0502_playback_shares'): content became private to its workspace by
 * default, and a workspace names the workspaces that may play its content with `coid`.
 */
export const playbackSharesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('playback_shares')
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('grantee_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('playback_shares_pk', ['workspace_id', 'grantee_id'])
      .execute();
    await db.schema.createIndex('playback_shares_grantee').on('playback_shares').column('grantee_id').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('playback_shares').execute();
  },
};

/** The playback edge's migrations by name (0500-0599, and 0701 taken when ad assets came with the library). */
export const playbackEdgeMigrations: Record<string, Migration> = {
  '0500_playback_edge': playbackEdgeMigration,
  '0502_playback_shares': playbackSharesMigration,
  '0701_playback_ad_assets': playbackAdAssetsMigration,
};
