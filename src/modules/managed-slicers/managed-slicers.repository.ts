import type { ExpressionBuilder, Selectable, Transaction } from 'kysely';
import type { Db, Engine } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/schema.js';
import type { SlicerConfig, SlicerState, TaskOperation, TaskState } from './managed-slicers.schema.js';
import type { ManagedSlicerTable, ManagedSlicerTaskTable } from './managed-slicers.tables.js';
import type {
  ClaimedTask,
  ClaimInput,
  EnqueueInput,
  EnqueueOutcome,
  FinishInput,
  LeaseFence,
  NewSlicer,
  NewTask,
  Page,
  SlicerCursor,
  SlicerRecord,
  SlicerStore,
  SlicerTaskStore,
  SlicerWithTask,
  TaskFilter,
  TaskRecord,
} from './slicer-store.js';
import { assertTaskTransition, deriveSlicerState } from './task-state.js';

type SlicerDb = Db;
type Trx = Transaction<Database>;
type SlicerRow = Selectable<ManagedSlicerTable>;
type TaskRow = Selectable<ManagedSlicerTaskTable>;

const OPEN: TaskState[] = ['PENDING', 'IN_PROGRESS'];
const FINISHED: TaskState[] = ['COMPLETED', 'FAILED'];
const CLAIM_CANDIDATES = 8;

/**
 * Slicers and their task queue in SQLite or PostgreSQL. Every change that affects a slicer's
 * state runs in one transaction holding the slicer row (FOR UPDATE on PostgreSQL; SQLite
 * transactions are serialised), so enqueues and task endings never race on the derived state.
 */
export class SlicerRepository implements SlicerStore, SlicerTaskStore {
  constructor(
    private readonly db: SlicerDb,
    private readonly engine: Engine,
  ) {}

  createSlicer(input: NewSlicer, newTask: NewTask): Promise<SlicerWithTask> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('managed_slicers')
        .values({
          id: input.id,
          workspace_id: input.workspaceId,
          ...configColumns(input.config),
          state: 'provisioning',
          ingest_url: null,
          latest_task_id: newTask.id,
          created_at: input.createdAt,
          updated_at: input.createdAt,
        })
        .execute();
      const task = await insertTask(trx, input.workspaceId, input.id, newTask, input.config);
      const slicer = await refreshState(trx, input.id, input.createdAt, undefined);
      return { slicer, task };
    });
  }

  enqueueTask(input: EnqueueInput): Promise<EnqueueOutcome> {
    return this.db.transaction().execute(async (trx): Promise<EnqueueOutcome> => {
      const row = await this.lockSlicer(trx, input.slicerId);
      if (!row || row.workspace_id !== input.workspaceId || row.state === 'deleted') return { kind: 'not_found' };
      const deleting = await trx
        .selectFrom('managed_slicer_tasks')
        .select('seq')
        .where('slicer_id', '=', row.id)
        .where('operation', '=', 'DELETE')
        .where('state', 'in', OPEN)
        .executeTakeFirst();
      if (deleting) return { kind: 'deletion_pending' };
      const config: SlicerConfig = { ...toSlicer(row).config, ...input.configPatch };
      const task = await insertTask(trx, row.workspace_id, row.id, input.task, config);
      await trx
        .updateTable('managed_slicers')
        .set({ ...configColumns(config), latest_task_id: task.id })
        .where('id', '=', row.id)
        .execute();
      const slicer = await refreshState(trx, row.id, input.task.createdAt, undefined);
      return { kind: 'enqueued', slicer, task };
    });
  }

  async findSlicer(workspaceId: string, slicerId: string): Promise<SlicerWithTask | undefined> {
    const row = await this.db
      .selectFrom('managed_slicers')
      .selectAll()
      .where('id', '=', slicerId)
      .where('workspace_id', '=', workspaceId)
      .where('state', '!=', 'deleted')
      .executeTakeFirst();
    if (!row) return undefined;
    const [withTask] = await this.withLatestTasks([row]);
    return withTask;
  }

  async listSlicers(workspaceId: string, limit: number, after?: SlicerCursor): Promise<Page<SlicerWithTask>> {
    const live = this.db.selectFrom('managed_slicers').where('workspace_id', '=', workspaceId).where('state', '!=', 'deleted');
    let page = live.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit);
    if (after) {
      page = page.where((eb) =>
        eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]),
      );
    }
    const [rows, count] = await Promise.all([
      page.execute(),
      live.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: await this.withLatestTasks(rows), total: Number(count.n) };
  }

  async findTask(workspaceId: string, taskId: string): Promise<TaskRecord | undefined> {
    const row = await this.db
      .selectFrom('managed_slicer_tasks')
      .selectAll()
      .where('id', '=', taskId)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    return row && toTask(row);
  }

  async listTasks(workspaceId: string, filter: TaskFilter, limit: number | undefined, beforeSeq?: number): Promise<Page<TaskRecord>> {
    let matching = this.db.selectFrom('managed_slicer_tasks').where('workspace_id', '=', workspaceId);
    if (filter.state !== undefined) matching = matching.where('state', '=', filter.state);
    if (filter.operation !== undefined) matching = matching.where('operation', '=', filter.operation);
    if (filter.slicerId !== undefined) matching = matching.where('slicer_id', '=', filter.slicerId);
    let page = matching.selectAll().orderBy('seq', 'desc');
    if (limit !== undefined) page = page.limit(limit);
    if (beforeSeq !== undefined) page = page.where('seq', '<', beforeSeq);
    const [rows, count] = await Promise.all([
      page.execute(),
      matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toTask), total: Number(count.n) };
  }

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
      await this.lockSlicer(trx, owner.slicer_id);
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

  private fenced(db: SlicerDb | Trx, taskId: string, fence: LeaseFence) {
    return db
      .updateTable('managed_slicer_tasks')
      .where('id', '=', taskId)
      .where('state', '=', 'IN_PROGRESS')
      .where('lease_owner', '=', fence.owner)
      .where('attempts', '=', fence.attempt);
  }

  private lockSlicer(trx: Trx, slicerId: string): Promise<SlicerRow | undefined> {
    const query = trx.selectFrom('managed_slicers').selectAll().where('id', '=', slicerId);
    return (this.engine === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  }

  private async withLatestTasks(rows: SlicerRow[]): Promise<SlicerWithTask[]> {
    if (rows.length === 0) return [];
    const tasks = await this.db
      .selectFrom('managed_slicer_tasks')
      .selectAll()
      .where('id', 'in', rows.map((r) => r.latest_task_id))
      .execute();
    const byId = new Map(tasks.map((t) => [t.id, toTask(t)]));
    return rows.map((row) => {
      const task = byId.get(row.latest_task_id);
      if (!task) throw new Error(`slicer ${row.id} has no task ${row.latest_task_id}`);
      return { slicer: toSlicer(row), task };
    });
  }
}

/** PENDING, or IN_PROGRESS under an expired (or missing) lease. */
function claimable(eb: ExpressionBuilder<Database, 'managed_slicer_tasks'>, now: number) {
  return eb.or([
    eb('state', '=', 'PENDING'),
    eb.and([eb('state', '=', 'IN_PROGRESS'), eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)])]),
  ]);
}

async function insertTask(
  trx: Trx,
  workspaceId: string,
  slicerId: string,
  task: NewTask,
  config: SlicerConfig,
): Promise<TaskRecord> {
  const row = await trx
    .insertInto('managed_slicer_tasks')
    .values({
      id: task.id,
      workspace_id: workspaceId,
      slicer_id: slicerId,
      operation: task.operation,
      state: 'PENDING',
      config: JSON.stringify(config),
      created_at: task.createdAt,
      updated_at: task.createdAt,
      started_at: null,
      finished_at: null,
      failure_reason: null,
      lease_owner: null,
      lease_expires_at: null,
      attempts: 0,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toTask(row);
}

/** Rewrites the slicer's derived state (and ingest URL when given) from its tasks. */
async function refreshState(
  trx: Trx,
  slicerId: string,
  now: number,
  ingestUrl: string | null | undefined,
): Promise<SlicerRecord> {
  const own = trx.selectFrom('managed_slicer_tasks').select(['operation', 'state']).where('slicer_id', '=', slicerId);
  const [headOpen, lastFinished] = await Promise.all([
    own.where('state', 'in', OPEN).orderBy('seq', 'asc').limit(1).executeTakeFirst(),
    own.where('state', 'in', FINISHED).orderBy('seq', 'desc').limit(1).executeTakeFirst(),
  ]);
  const state: SlicerState = deriveSlicerState({
    headOpen: headOpen?.operation as TaskOperation | undefined,
    lastFinished: lastFinished && { operation: lastFinished.operation as TaskOperation, state: lastFinished.state as TaskState },
  });
  const row = await trx
    .updateTable('managed_slicers')
    .set({ state, updated_at: now, ...(ingestUrl !== undefined ? { ingest_url: ingestUrl } : {}) })
    .where('id', '=', slicerId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toSlicer(row);
}

const configColumns = (config: SlicerConfig) => ({
  name: config.name,
  description: config.description ?? null,
  region: config.region,
  ingest_protocol: config.ingest_protocol,
  output_profile: config.output_profile,
});

function toSlicer(row: SlicerRow): SlicerRecord {
  const config = {
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    region: row.region,
    ingest_protocol: row.ingest_protocol,
    output_profile: row.output_profile,
  } as SlicerConfig;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    config,
    state: row.state as SlicerState,
    ingestUrl: row.ingest_url,
    latestTaskId: row.latest_task_id,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

const numberOrNull = (value: number | null) => (value === null ? null : Number(value));

function toTask(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    seq: Number(row.seq),
    workspaceId: row.workspace_id,
    slicerId: row.slicer_id,
    operation: row.operation as TaskOperation,
    state: row.state as TaskState,
    config: JSON.parse(row.config) as SlicerConfig,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    startedAt: numberOrNull(row.started_at),
    finishedAt: numberOrNull(row.finished_at),
    failureReason: row.failure_reason,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: numberOrNull(row.lease_expires_at),
    attempts: Number(row.attempts),
  };
}

/**
 * Deletes every slicer and task of a workspace (deleting the workspace); rows deleted. A task the
 * runner holds at that moment finds its rows gone and ends without effect.
 */
export async function deleteWorkspaceSlicers(db: Db, workspaceId: string): Promise<number> {
  const tasks = await db.deleteFrom('managed_slicer_tasks').where('workspace_id', '=', workspaceId).executeTakeFirst();
  const slicers = await db.deleteFrom('managed_slicers').where('workspace_id', '=', workspaceId).executeTakeFirst();
  return Number(tasks.numDeletedRows) + Number(slicers.numDeletedRows);
}
