import type { ExpressionBuilder } from 'kysely';
import type { Db, Engine } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/schema.js';
import { lockSlicer, OPEN, refreshState, toTask, type Trx } from './managed-slicers.repository.js';
import type { ClaimedTask, ClaimInput, FinishInput, LeaseFence, SlicerTaskStore } from './slicer-store.js';
import { assertTaskTransition } from './task-state.js';

const CLAIM_CANDIDATES = 8;

/**
 * The slicer task queue as the runner sees it, in SQLite or PostgreSQL: claims under a lease,
 * renewals and releases fenced by the claim (owner, attempt), and task endings that rewrite the
 * slicer's state in the same transaction, holding its row as enqueues do (`lockSlicer`).
 */
export class SlicerTaskQueue implements SlicerTaskStore {
  constructor(
    private readonly db: Db,
    private readonly engine: Engine,
  ) {}

  async releaseLeases(now: number, owner?: string): Promise<number> {
    let query = this.db
      .updateTable('managed_slicer_tasks')
      .set({ lease_expires_at: now, updated_at: now })
      .where('state', '=', 'IN_PROGRESS');
    if (owner !== undefined) query = query.where('lease_owner', '=', owner);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async claimNextTask({ owner, now, leaseMs }: ClaimInput): Promise<ClaimedTask | undefined> {
    const candidates = await this.db
      .selectFrom('managed_slicer_tasks')
      .select('id')
      .where((eb) => claimable(eb, now))
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('managed_slicer_tasks as p')
              .select('p.seq')
              .whereRef('p.slicer_id', '=', 'managed_slicer_tasks.slicer_id')
              .whereRef('p.seq', '<', 'managed_slicer_tasks.seq')
              .where('p.state', 'in', OPEN),
          ),
        ),
      )
      .orderBy('seq')
      .limit(CLAIM_CANDIDATES)
      .execute();
    for (const { id } of candidates) {
      // Conditional on still being claimable: of two instances racing for one task, one wins.
      const claimed = await this.db
        .updateTable('managed_slicer_tasks')
        .set((eb) => ({
          state: 'IN_PROGRESS',
          lease_owner: owner,
          lease_expires_at: now + leaseMs,
          attempts: eb('attempts', '+', 1),
          started_at: eb.fn.coalesce('started_at', eb.val(now)),
          updated_at: now,
        }))
        .where('id', '=', id)
        .where((eb) => claimable(eb, now))
        .returningAll()
        .executeTakeFirst();
      // A task claimed before was necessarily IN_PROGRESS: only those are claimed again.
      if (claimed) return { ...toTask(claimed), resumed: claimed.attempts > 1 };
    }
    return undefined;
  }

  async renewLease(taskId: string, fence: LeaseFence, leaseExpiresAt: number): Promise<boolean> {
    const result = await this.fenced(this.db, taskId, fence).set({ lease_expires_at: leaseExpiresAt }).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async releaseLease(taskId: string, fence: LeaseFence, now: number): Promise<boolean> {
    const result = await this.fenced(this.db, taskId, fence).set({ lease_expires_at: now, updated_at: now }).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async finishTask(input: FinishInput): Promise<boolean> {
    assertTaskTransition('IN_PROGRESS', input.state);
    return this.db.transaction().execute(async (trx) => {
      const owner = await trx.selectFrom('managed_slicer_tasks').select('slicer_id').where('id', '=', input.taskId).executeTakeFirst();
      if (!owner) return false;
      await lockSlicer(trx, this.engine, owner.slicer_id);
      const result = await this.fenced(trx, input.taskId, input.fence)
        .set({
          state: input.state,
          failure_reason: input.failureReason,
          finished_at: input.now,
          updated_at: input.now,
          lease_owner: null,
          lease_expires_at: null,
        })
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await refreshState(trx, owner.slicer_id, input.now, input.ingestUrl);
      return true;
    });
  }

  private fenced(db: Db | Trx, taskId: string, fence: LeaseFence) {
    return db
      .updateTable('managed_slicer_tasks')
      .where('id', '=', taskId)
      .where('state', '=', 'IN_PROGRESS')
      .where('lease_owner', '=', fence.owner)
      .where('attempts', '=', fence.attempt);
  }
}

/** PENDING, or IN_PROGRESS under an expired (or missing) lease. */
function claimable(eb: ExpressionBuilder<Database, 'managed_slicer_tasks'>, now: number) {
  return eb.or([
    eb('state', '=', 'PENDING'),
    eb.and([eb('state', '=', 'IN_PROGRESS'), eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)])]),
  ]);
}
