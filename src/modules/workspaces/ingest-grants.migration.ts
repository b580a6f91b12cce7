import type { Kysely, Migration } from 'kysely';

/**
 * Ingest grants (registered as '0610_workspace_ingest_grants': after every migration that may
 * have run already, as Kysely requires of a new one).
 */
export const ingestGrantsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('ingest_grants')
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('grantee_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('ingest_grants_pk', ['workspace_id', 'grantee_id'])
      .execute();
    await db.schema.createIndex('ingest_grants_grantee').on('ingest_grants').column('grantee_id').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('ingest_grants').execute();
  },
};

/** The ingest grants' migrations by name (0610). */
export const ingestGrantMigrations: Record<string, Migration> = {
  '0610_workspace_ingest_grants': ingestGrantsMigration,
};
