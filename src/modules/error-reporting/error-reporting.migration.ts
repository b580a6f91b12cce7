import type { Kysely, Migration } from 'kysely';

export const errorReportingMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('error_reporting_settings')
      .addColumn('workspace_id', 'varchar(64)', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
      .addColumn('callback_url', 'varchar(2048)')
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('secret_sealed', 'text', (c) => c.notNull())
      .addColumn('previous_secret_sealed', 'text')
      .addColumn('previous_secret_expires_at', 'bigint')
      .addColumn('revision', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('error_reporting_settings').execute();
  },
};
