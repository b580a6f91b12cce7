import type { Kysely, Migration } from 'kysely';

export const storageReservationsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('storage_reservations')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('bytes', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('storage_reservations_workspace').on('storage_reservations').columns(['workspace_id', 'expires_at']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('storage_reservations').execute();
  },
};

/** Workspace quotas' migrations by name (0800-0899). */
export const quotaMigrations: Record<string, Migration> = {
  '0800_storage_reservations': storageReservationsMigration,
};
