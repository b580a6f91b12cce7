import type { Kysely, Migration } from 'kysely';

/**
 * Facts about the deployment kept beside its data: the secret key's check value (an instance
 * started with another key refuses to start) and, briefly, the rows of readiness write probes.
 */
export const deploymentChecksMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('deployment_checks')
      .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('deployment_checks').execute();
  },
};
