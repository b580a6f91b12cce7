import type { Db } from '../db/database.js';
import type { DeliveryAttemptTable } from './attempt-log.tables.js';

export type DeliveryRow = DeliveryAttemptTable;
/** A row without its body and headers: what a list shows. */
export type DeliverySummaryRow = Omit<DeliveryRow, 'body' | 'headers'>;

const summaryColumns = ['id', 'workspace_id', 'webhook_id', 'url', 'at', 'outcome', 'status', 'latency_ms', 'detail', 'resend_of', 'subscription_id'] as const;

/** Position in the newest-first order: rows strictly after it come next. */
export interface DeliveryPosition {
  at: number;
  id: string;
}

/** Inserts a batch of attempts in one statement. */
export const insertDeliveries = async (db: Db, rows: readonly DeliveryRow[]): Promise<void> => {
  if (rows.length === 0) return;
  await db.insertInto('error_report_deliveries').values([...rows]).execute();
};

/** A page of a workspace's attempts, newest first, and how many match the filter in all. */
export const listDeliveries = async (
  db: Db,
  owner: string,
  filter: { outcome?: string | undefined },
  limit: number,
  after?: DeliveryPosition,
): Promise<{ rows: DeliverySummaryRow[]; total: number }> => {
  // Error Reports only: operational event webhooks share the table (their attempts name a subscription).
  let matching = db.selectFrom('error_report_deliveries').where('workspace_id', '=', owner).where('subscription_id', 'is', null);
  if (filter.outcome !== undefined) matching = matching.where('outcome', '=', filter.outcome);
  let page = matching.select([...summaryColumns]);
  if (after) {
    page = page.where((eb) => eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]));
  }
  const [rows, count] = await Promise.all([
    page.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute(),
    matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
};

export const findDelivery = (db: Db, owner: string, id: string): Promise<DeliveryRow | undefined> =>
  db.selectFrom('error_report_deliveries').selectAll().where('workspace_id', '=', owner).where('id', '=', id).where('subscription_id', 'is', null).executeTakeFirst();

/** Deletes attempts that ended before `cutoff` (Unix ms); rows deleted. */
export const deleteDeliveriesBefore = async (db: Db, cutoff: number): Promise<number> =>
  Number((await db.deleteFrom('error_report_deliveries').where('at', '<', cutoff).executeTakeFirst()).numDeletedRows);

/** Workspaces holding more than `max` attempts. */
export const workspacesOver = async (db: Db, max: number): Promise<string[]> =>
  (
    await db
      .selectFrom('error_report_deliveries')
      .select('workspace_id')
      .groupBy('workspace_id')
      .having((eb) => eb.fn.countAll(), '>', max)
      .execute()
  ).map((r) => r.workspace_id);

/** Keeps a workspace's `keep` newest attempts and deletes the rest; rows deleted. */
export const trimWorkspace = async (db: Db, owner: string, keep: number): Promise<number> => {
  const oldestKept = await db
    .selectFrom('error_report_deliveries')
    .select(['at', 'id'])
    .where('workspace_id', '=', owner)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .offset(keep - 1)
    .limit(1)
    .executeTakeFirst();
  if (!oldestKept) return 0;
  const result = await db
    .deleteFrom('error_report_deliveries')
    .where('workspace_id', '=', owner)
    .where((eb) => eb.or([eb('at', '<', oldestKept.at), eb.and([eb('at', '=', oldestKept.at), eb('id', '<', oldestKept.id)])]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
};

/** Deletes a workspace's logged attempts (deleting the workspace); rows deleted. */
export const deleteWorkspaceDeliveries = async (db: Db, owner: string): Promise<number> =>
  Number((await db.deleteFrom('error_report_deliveries').where('workspace_id', '=', owner).executeTakeFirst()).numDeletedRows);
