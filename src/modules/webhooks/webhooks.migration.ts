import type { Kysely, Migration } from 'kysely';

export const webhooksMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('webhook_subscriptions')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('url', 'varchar(2048)', (c) => c.notNull())
      .addColumn('event_types', 'text', (c) => c.notNull())
      .addColumn('description', 'varchar(512)', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('secret_sealed', 'text', (c) => c.notNull())
      .addColumn('previous_secret_sealed', 'text')
      .addColumn('previous_secret_expires_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_subscriptions_by_workspace').on('webhook_subscriptions').columns(['workspace_id', 'created_at', 'id']).execute();
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      // No foreign keys: a subscription or workspace deleted meanwhile leaves an attempt that finds
      // nothing to send to and ends (each deletion also removes its pending deliveries).
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('subscription_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('event_id', 'varchar(128)', (c) => c.notNull())
      .addColumn('event_type', 'varchar(64)', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('lease_owner', 'varchar(128)')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['next_attempt_at', 'id']).execute();
    await db.schema.createIndex('webhook_deliveries_by_subscription').on('webhook_deliveries').columns(['subscription_id', 'created_at', 'id']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('webhook_deliveries').execute();
    await db.schema.dropTable('webhook_subscriptions').execute();
  },
};

/** Operational event webhooks' migrations by name (their range: 0900-0999). */
export const webhookMigrations: Record<string, Migration> = {
  '0900_webhooks': webhooksMigration,
};
