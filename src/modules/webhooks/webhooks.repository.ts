import type { Db } from '../../platform/db/database.js';
import type { DeliveryAttemptTable } from '../../platform/outbound/attempt-log.tables.js';
import type { WebhookDeliveryTable, WebhookSubscriptionTable } from './webhooks.tables.js';

export type SubscriptionRow = WebhookSubscriptionTable;
export type PendingDeliveryRow = WebhookDeliveryTable;
/** An attempt in the shared delivery attempt log (platform/outbound), with its subscription. */
export type AttemptRow = DeliveryAttemptTable;
export type AttemptSummaryRow = Omit<AttemptRow, 'body' | 'headers'>;

const attemptSummaryColumns = ['id', 'workspace_id', 'webhook_id', 'url', 'at', 'outcome', 'status', 'latency_ms', 'detail', 'resend_of', 'subscription_id'] as const;

// Subscriptions

export const insertSubscription = async (db: Db, row: SubscriptionRow): Promise<void> => {
  await db.insertInto('webhook_subscriptions').values(row).execute();
};

export const countSubscriptions = async (db: Db, owner: string): Promise<number> =>
  Number((await db.selectFrom('webhook_subscriptions').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', owner).executeTakeFirstOrThrow()).n);

export const listSubscriptions = (db: Db, owner: string): Promise<SubscriptionRow[]> =>
  db.selectFrom('webhook_subscriptions').selectAll().where('workspace_id', '=', owner).orderBy('created_at').orderBy('id').execute();

export const findSubscription = (db: Db, owner: string, id: string): Promise<SubscriptionRow | undefined> =>
  db.selectFrom('webhook_subscriptions').selectAll().where('workspace_id', '=', owner).where('id', '=', id).executeTakeFirst();

/** The subscription an attempt goes to, whatever its workspace (the delivery names both). */
export const findSubscriptionById = (db: Db, id: string): Promise<SubscriptionRow | undefined> =>
  db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();

export const updateSubscription = async (
  db: Db,
  owner: string,
  id: string,
  change: Partial<Omit<SubscriptionRow, 'id' | 'workspace_id' | 'created_at'>>,
): Promise<boolean> =>
  (await db.updateTable('webhook_subscriptions').set(change).where('workspace_id', '=', owner).where('id', '=', id).executeTakeFirst()).numUpdatedRows > 0n;

/** Deletes a subscription and its pending deliveries; false when it did not exist. */
export const deleteSubscription = (db: Db, owner: string, id: string): Promise<boolean> =>
  db.transaction().execute(async (trx) => {
    const removed = await trx.deleteFrom('webhook_subscriptions').where('workspace_id', '=', owner).where('id', '=', id).executeTakeFirst();
    await trx.deleteFrom('webhook_deliveries').where('subscription_id', '=', id).execute();
    return removed.numDeletedRows > 0n;
  });

// Pending deliveries

export const insertPendingDelivery = async (db: Db, row: PendingDeliveryRow): Promise<void> => {
  await db.insertInto('webhook_deliveries').values(row).execute();
};

export const countPending = async (db: Db, subscriptionId: string): Promise<number> =>
  Number((await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('subscription_id', '=', subscriptionId).executeTakeFirstOrThrow()).n);

/** The subscription's `n` oldest pending deliveries (the ones the cap drops first). */
export const oldestPending = (db: Db, subscriptionId: string, n: number): Promise<PendingDeliveryRow[]> =>
  n <= 0
    ? Promise.resolve([])
    : db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', subscriptionId).orderBy('created_at').orderBy('id').limit(n).execute();

export const deletePending = async (db: Db, id: string): Promise<boolean> =>
  (await db.deleteFrom('webhook_deliveries').where('id', '=', id).executeTakeFirst()).numDeletedRows > 0n;

/** Pending deliveries of each of a workspace's subscriptions. */
export const pendingBySubscription = async (db: Db, owner: string): Promise<Map<string, number>> => {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['subscription_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('workspace_id', '=', owner)
    .groupBy('subscription_id')
    .execute();
  return new Map(rows.map((r) => [r.subscription_id, Number(r.n)]));
};

/** Attempts due by `now` whose lease is free, oldest due first. */
export const dueDeliveryIds = async (db: Db, now: number, limit: number): Promise<string[]> =>
  (
    await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]))
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit)
      .execute()
  ).map((r) => r.id);

/**
 * Takes the lease of one due attempt, conditional on it still being free: of two instances
 * racing for it, one wins. The row as claimed, or undefined.
 */
export const claimDelivery = (db: Db, id: string, owner: string, now: number, leaseMs: number): Promise<PendingDeliveryRow | undefined> =>
  db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: owner, lease_expires_at: now + leaseMs })
    .where('id', '=', id)
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]))
    .returningAll()
    .executeTakeFirst();

/** When the next attempt not held by a lease is due (the runner's wake-up), or undefined. */
export const nextDueAt = async (db: Db): Promise<number | undefined> => {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.min('next_attempt_at').as('at'))
    .where('lease_owner', 'is', null)
    .executeTakeFirst();
  return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
};

/** Gives a claimed attempt back unmade (shutdown): due again at once, for any instance. */
export const releaseLease = async (db: Db, id: string, owner: string): Promise<void> => {
  await db.updateTable('webhook_deliveries').set({ lease_owner: null, lease_expires_at: null }).where('id', '=', id).where('lease_owner', '=', owner).execute();
};

/** Embedded mode, at start: the one server takes back every lease its predecessor held. */
export const releaseAllLeases = async (db: Db): Promise<number> =>
  Number((await db.updateTable('webhook_deliveries').set({ lease_owner: null, lease_expires_at: null }).where('lease_owner', 'is not', null).executeTakeFirst()).numUpdatedRows);

/**
 * Ends an attempt: logs it in the delivery log and either removes the delivery (delivered, or
 * its retries used up: `next` undefined) or schedules its next attempt; fenced by the lease, so an
 * instance whose lease was taken over records nothing. Both in one transaction.
 */
export const finishAttempt = (
  db: Db,
  delivery: { id: string; leaseOwner: string; attempts: number },
  logged: AttemptRow,
  next: { at: number } | undefined,
): Promise<boolean> =>
  db.transaction().execute(async (trx) => {
    let changed: bigint;
    if (next) {
      changed = (
        await trx
          .updateTable('webhook_deliveries')
          .set({ attempts: delivery.attempts + 1, next_attempt_at: next.at, lease_owner: null, lease_expires_at: null })
          .where('id', '=', delivery.id)
          .where('lease_owner', '=', delivery.leaseOwner)
          .where('attempts', '=', delivery.attempts)
          .executeTakeFirst()
      ).numUpdatedRows;
    } else {
      changed = (
        await trx
          .deleteFrom('webhook_deliveries')
          .where('id', '=', delivery.id)
          .where('lease_owner', '=', delivery.leaseOwner)
          .where('attempts', '=', delivery.attempts)
          .executeTakeFirst()
      ).numDeletedRows;
    }
    if (changed === 0n) return false;
    await trx.insertInto('error_report_deliveries').values(logged).execute();
    return true;
  });

// The delivery log (shared with Error Reporting: its retention sweep trims these rows too)

export const insertAttempt = async (db: Db, row: AttemptRow): Promise<void> => {
  await db.insertInto('error_report_deliveries').values(row).execute();
};

/** A page of a workspace's event attempts (every subscription, or one), newest first, and the total. */
export const listAttempts = async (
  db: Db,
  owner: string,
  filter: { subscriptionId?: string | undefined; outcome?: string | undefined },
  limit: number,
  after?: { at: number; id: string },
): Promise<{ rows: AttemptSummaryRow[]; total: number }> => {
  let matching = db.selectFrom('error_report_deliveries').where('workspace_id', '=', owner);
  matching = filter.subscriptionId !== undefined ? matching.where('subscription_id', '=', filter.subscriptionId) : matching.where('subscription_id', 'is not', null);
  if (filter.outcome !== undefined) matching = matching.where('outcome', '=', filter.outcome);
  let page = matching.select([...attemptSummaryColumns]);
  if (after) page = page.where((eb) => eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]));
  const [rows, count] = await Promise.all([
    page.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute(),
    matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
};

export const findAttempt = (db: Db, owner: string, id: string): Promise<AttemptRow | undefined> =>
  db.selectFrom('error_report_deliveries').selectAll().where('workspace_id', '=', owner).where('id', '=', id).where('subscription_id', 'is not', null).executeTakeFirst();

/** Deleting a workspace: its subscriptions and pending deliveries (its logged attempts go with Error Reporting's part). */
export const deleteWorkspaceRows = async (db: Db, owner: string): Promise<number> =>
  Number((await db.deleteFrom('webhook_deliveries').where('workspace_id', '=', owner).executeTakeFirst()).numDeletedRows) +
  Number((await db.deleteFrom('webhook_subscriptions').where('workspace_id', '=', owner).executeTakeFirst()).numDeletedRows);
