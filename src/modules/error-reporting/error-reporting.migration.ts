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

/** The persistent delivery log: every attempt with its body and signature headers (retention-bounded). */
export const deliveryLogMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('error_report_deliveries')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      // No foreign key: the log is written in batches off the delivery path, and a workspace deleted
      // meanwhile must not fail the batch of the others (its rows go with its data part).
      .addColumn('workspace_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('webhook_id', 'varchar(128)', (c) => c.notNull())
      .addColumn('url', 'varchar(2048)', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('outcome', 'varchar(32)', (c) => c.notNull())
      .addColumn('status', 'integer')
      .addColumn('latency_ms', 'bigint', (c) => c.notNull())
      .addColumn('detail', 'text')
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('headers', 'text', (c) => c.notNull())
      .addColumn('resend_of', 'varchar(64)')
      .execute();
    await db.schema.createIndex('error_report_deliveries_by_workspace').on('error_report_deliveries').columns(['workspace_id', 'at', 'id']).execute();
    await db.schema.createIndex('error_report_deliveries_by_time').on('error_report_deliveries').column('at').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('error_report_deliveries').execute();
  },
};

/**
 * Operational event webhooks (src/modules/webhooks) log their attempts here too: the subscription
 * an attempt went to, null for an Error Report.
 */
export const deliveryLogSubscriptionMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('error_report_deliveries').addColumn('subscription_id', 'varchar(64)').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('error_report_deliveries').dropColumn('subscription_id').execute();
  },
};

/** Error Reporting's migrations by name (its range: 0200-0299). */
export const errorReportingMigrations: Record<string, Migration> = {
  '0200_error_reporting': errorReportingMigration,
  '0201_error_reporting_delivery_log': deliveryLogMigration,
  '0202_delivery_log_subscription': deliveryLogSubscriptionMigration,
};
