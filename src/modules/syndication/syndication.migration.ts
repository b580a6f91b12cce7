import type { Kysely, Migration } from 'kysely';

/** 0300_syndication: publishing targets, their schedules and clipping profiles. */
export const syndicationMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('syndication_targets')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('platform', 'varchar(64)', (c) => c.notNull())
      .addColumn('target_protocol', 'varchar(16)', (c) => c.notNull())
      .addColumn('platform_config', 'text', (c) => c.notNull())
      .addColumn('secrets_sealed', 'text', (c) => c.notNull())
      .addColumn('secret_fields', 'varchar(64)', (c) => c.notNull())
      .addColumn('pull_url', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('syndication_targets_workspace').on('syndication_targets').columns(['workspace_id', 'created_at']).execute();

    await db.schema
      .createTable('syndication_schedules')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('target_id', 'varchar(64)', (c) => c.notNull().references('syndication_targets.id').onDelete('cascade'))
      .addColumn('content_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('content_type', 'varchar(1)', (c) => c.notNull())
      .addColumn('region', 'varchar(64)', (c) => c.notNull())
      .addColumn('scte35_enabled', 'integer', (c) => c.notNull())
      .addColumn('source_url_params', 'text', (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('syndication_schedules_target').on('syndication_schedules').columns(['target_id', 'status']).execute();
    await db.schema.createIndex('syndication_schedules_workspace').on('syndication_schedules').columns(['workspace_id', 'created_at']).execute();

    await db.schema
      .createTable('syndication_clipping_profiles')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('integrations', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('syndication_clipping_profiles_workspace').on('syndication_clipping_profiles').columns(['workspace_id', 'created_at']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('syndication_schedules').execute();
    await db.schema.dropTable('syndication_targets').execute();
    await db.schema.dropTable('syndication_clipping_profiles').execute();
  },
};

/** Cluster mode: which instance runs a started schedule's push, so a survivor takes over a dead one's. */
export const pushOwnersMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('syndication_schedules').addColumn('publisher_instance', 'varchar(64)').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('syndication_schedules').dropColumn('publisher_instance').execute();
  },
};

/** Publishing's migrations by name (0300-0399). */
export const syndicationMigrations: Record<string, Migration> = {
  '0300_syndication': syndicationMigration,
  '0301_syndication_push_owners': pushOwnersMigration,
};
