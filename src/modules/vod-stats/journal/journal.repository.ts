import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../../platform/db/database.js';
import type { StoredBatch } from './cluster-journal.js';
import type { VodStatsJournalTable } from './journal.tables.js';

type JournalRow = Selectable<VodStatsJournalTable>;
export type NewJournalRow = Insertable<VodStatsJournalTable>;

const toBatch = (row: JournalRow): StoredBatch => ({
  seq: Number(row.seq),
  receivedAt: Number(row.received_at),
  kind: row.kind === 'json' ? 'json' : 'ndjson',
  authOwner: row.auth_owner,
  owners: row.any_owner === 1 ? null : row.owners === null ? [row.auth_owner] : (JSON.parse(row.owners) as string[]),
  body: Buffer.isBuffer(row.body) ? row.body : Buffer.from(row.body),
  events: Number(row.events),
  instanceId: row.instance_id,
  batchKey: row.batch_key === null ? String(row.seq) : `${Number(row.seq)}:${row.batch_key}`,
});

/** Inserts rows in one statement; resolves with their seqs in the order given. */
export async function insertBatches(db: Db, rows: NewJournalRow[]): Promise<number[]> {
  const inserted = await db.insertInto('vod_stats_journal').values(rows).returning('seq').execute();
  // The database numbers the rows of one VALUES list in order: ascending seqs are that order.
  return inserted.map((r) => Number(r.seq)).sort((a, b) => a - b);
}

/** Batches with seq > `afterSeq` (and received at or after `since`), in journal order. */
export async function batchesAfter(db: Db, afterSeq: number, limit: number, since = 0): Promise<StoredBatch[]> {
  const rows = await db
    .selectFrom('vod_stats_journal')
    .selectAll()
    .where('seq', '>', afterSeq)
    .where('received_at', '>=', since)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map(toBatch);
}

/** Batches one instance journaled at or after `since` (its own clock), in journal order. */
export async function batchesOfInstance(db: Db, instanceId: string, since: number, afterSeq: number, limit: number): Promise<StoredBatch[]> {
  const rows = await db
    .selectFrom('vod_stats_journal')
    .selectAll()
    .where('instance_id', '=', instanceId)
    .where('received_at', '>=', since)
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map(toBatch);
}

/** Deletes up to `limit` batches received before `cutoff`; returns how many. */
export async function deleteBatchesBefore(db: Db, cutoff: number, limit: number): Promise<number> {
  const doomed = db.selectFrom('vod_stats_journal').select('seq').where('received_at', '<', cutoff).orderBy('seq').limit(limit);
  const result = await db.deleteFrom('vod_stats_journal').where('seq', 'in', doomed).executeTakeFirst();
  return Number(result.numDeletedRows);
}

const BINDING = 'vod-stats';

/** The deployment id and epoch the Redis statistics must carry (undefined before the first start). */
export const readBinding = (db: Db) =>
  db.selectFrom('vod_stats_binding').select(['deployment_id', 'epoch']).where('name', '=', BINDING).executeTakeFirst();

/** Creates the binding row unless one exists (instances starting together agree on the first one written). */
export const createBinding = (db: Db, deploymentId: string, epoch: number, now: number) =>
  db.insertInto('vod_stats_binding').values({ name: BINDING, deployment_id: deploymentId, epoch, created_at: now }).onConflict((oc) => oc.column('name').doNothing()).execute();

/** Moves the epoch on, to at least `atLeast`, and returns the binding. */
export const advanceEpoch = async (db: Db, atLeast: number) => {
  const current = await readBinding(db);
  if (current === undefined) throw new Error('vod-stats binding row missing');
  const epoch = Math.max(Number(current.epoch) + 1, atLeast);
  await db.updateTable('vod_stats_binding').set({ epoch }).where('name', '=', BINDING).execute();
  return { deployment_id: current.deployment_id, epoch };
};
