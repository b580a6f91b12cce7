import { PostgresAdapter, type Kysely, type Migration } from 'kysely';

const isPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * The ingest journal of cluster mode (created on both engines; only PostgreSQL deployments fill
 * it). Registered as '0600_cluster', the name it ran under when it lived in modules/cluster.
 * It also created `vod_stats_snapshots`, which no code uses any more: dropSnapshotsMigration.
 */
export const journalMigration: Migration = {
  async up(db: Kysely<unknown>) {
    // A database-assigned order and a binary body: the spots where the engines differ.
    const table = db.schema.createTable('vod_stats_journal');
    const withSeq = isPostgres(db)
      ? table.addColumn('seq', 'bigserial', (c) => c.primaryKey()).addColumn('body', 'bytea', (c) => c.notNull())
      : table.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement()).addColumn('body', 'blob', (c) => c.notNull());
    await withSeq
      .addColumn('received_at', 'bigint', (c) => c.notNull())
      .addColumn('kind', 'varchar(8)', (c) => c.notNull())
      .addColumn('auth_owner', 'varchar(256)', (c) => c.notNull())
      .addColumn('any_owner', 'integer', (c) => c.notNull())
      .addColumn('events', 'integer', (c) => c.notNull())
      .addColumn('instance_id', 'varchar(128)', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('vod_stats_journal_received').on('vod_stats_journal').columns(['received_at']).execute();
    await db.schema.createIndex('vod_stats_journal_instance').on('vod_stats_journal').columns(['instance_id', 'seq']).execute();
    await db.schema
      .createTable('vod_stats_snapshots')
      .addColumn('seq', 'bigint', (c) => c.primaryKey())
      .addColumn('lines', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('vod_stats_snapshots').execute();
    await db.schema.dropTable('vod_stats_journal').execute();
  },
};

/**
 * Drops the snapshot table of a PostgreSQL journal for the embedded pipeline that was never used
 * ('0601_vod_stats_drop_snapshots'; the migration that created it stays, as Kysely requires).
 */
export const dropSnapshotsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.dropTable('vod_stats_snapshots').ifExists().execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema
      .createTable('vod_stats_snapshots')
      .addColumn('seq', 'bigint', (c) => c.primaryKey())
      .addColumn('lines', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};

/**
 * The owners an ingest-key batch could name when it was accepted (JSON list; null: the signing
 * workspace only, or any when any_owner is 1), so a replay re-derives the events accepted then
 * whatever the ingest grants are later ('0611_vod_stats_journal_owners').
 */
export const journalOwnersMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('vod_stats_journal').addColumn('owners', 'text').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('vod_stats_journal').dropColumn('owners').execute();
  },
};

/**
 * What binds the Redis statistics to this journal ('0612_vod_stats_journal_binding'):
 * `vod_stats_binding` holds the deployment id and epoch the Redis state must carry, and each
 * journal row a `batch_key` (its seq plus a random token) under which Redis marks it counted,
 * so a seq the database hands out again (a restore to an earlier point) is never taken for a
 * batch counted before. Rows of earlier builds keep their seq as key (null column).
 */
export const journalBindingMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('vod_stats_journal').addColumn('batch_key', 'varchar(40)').execute();
    await db.schema
      .createTable('vod_stats_binding')
      .addColumn('name', 'varchar(32)', (c) => c.primaryKey())
      .addColumn('deployment_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('epoch', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('vod_stats_binding').execute();
    await db.schema.alterTable('vod_stats_journal').dropColumn('batch_key').execute();
  },
};

/** The statistics journal's migrations by name (0600-0609, 0611-0699; named '0600_cluster' when it lived in modules/cluster: an executed name must stay registered). */
export const vodStatsJournalMigrations: Record<string, Migration> = {
  '0600_cluster': journalMigration,
  '0601_vod_stats_drop_snapshots': dropSnapshotsMigration,
  '0611_vod_stats_journal_owners': journalOwnersMigration,
  '0612_vod_stats_journal_binding': journalBindingMigration,
};
