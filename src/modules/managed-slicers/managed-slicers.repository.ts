import type { Selectable, Transaction } from 'kysely';
import type { Db, Engine } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/schema.js';
import type { LiveStatus } from './live-status.js';
import type { SlicerConfig, SlicerState, TaskOperation, TaskState } from './managed-slicers.schema.js';
import type { ManagedSlicerTable, ManagedSlicerTaskTable } from './managed-slicers.tables.js';
import type {
  EnqueueInput,
  EnqueueOutcome,
  NewSlicer,
  NewTask,
  Page,
  SealedStreamKey,
  SlicerCursor,
  SlicerRecord,
  SlicerStore,
  SlicerWithTask,
  StreamKeyStore,
  TaskFilter,
  TaskRecord,
} from './slicer-store.js';
import { deriveSlicerState } from './task-state.js';
import { lockWorkspace, quotaExceeded } from '../../platform/quota/workspace-quotas.js';

type SlicerDb = Db;
export type Trx = Transaction<Database>;
type SlicerRow = Selectable<ManagedSlicerTable>;
type TaskRow = Selectable<ManagedSlicerTaskTable>;

export const OPEN: TaskState[] = ['PENDING', 'IN_PROGRESS'];
const FINISHED: TaskState[] = ['COMPLETED', 'FAILED'];

/**
 * Slicers and their tasks in SQLite or PostgreSQL, as the service sees them (the runner's side,
 * the lease queue, is `SlicerTaskQueue` in task-queue.repository.ts). Every change that affects a
 * slicer's state runs in one transaction holding the slicer row (`lockSlicer`), so enqueues here
 * and task endings there never race on the derived state.
 */
export class SlicerRepository implements SlicerStore, StreamKeyStore {
  constructor(
    private readonly db: SlicerDb,
    private readonly engine: Engine,
  ) {}

  createSlicer(input: NewSlicer, newTask: NewTask, maxPerWorkspace?: number): Promise<SlicerWithTask> {
    return this.db.transaction().execute(async (trx) => {
      if (maxPerWorkspace !== undefined) {
        await lockWorkspace(trx, input.workspaceId);
        const held = await countWorkspaceSlicers(trx, input.workspaceId);
        if (held >= maxPerWorkspace) throw quotaExceeded('slicers', maxPerWorkspace, held);
      }
      await trx
        .insertInto('managed_slicers')
        .values({
          id: input.id,
          workspace_id: input.workspaceId,
          ...configColumns(input.config),
          state: 'provisioning',
          ingest_url: null,
          stream_key_sealed: input.sealedStreamKey,
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
      const row = await lockSlicer(trx, this.engine, input.slicerId);
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
        .set({ ...configColumns(config), latest_task_id: task.id, ...(input.sealedStreamKey !== undefined ? { stream_key_sealed: input.sealedStreamKey } : {}) })
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

  async streamKeyOf(slicerId: string): Promise<SealedStreamKey | null | undefined> {
    const row = await this.db.selectFrom('managed_slicers').select('stream_key_sealed').where('id', '=', slicerId).executeTakeFirst();
    return row && (row.stream_key_sealed as SealedStreamKey | null);
  }

  async fillStreamKey(slicerId: string, sealed: SealedStreamKey): Promise<SealedStreamKey | undefined> {
    // Conditional on still having none: of two first readers, the later one reads the winner's key.
    await this.db.updateTable('managed_slicers').set({ stream_key_sealed: sealed }).where('id', '=', slicerId).where('stream_key_sealed', 'is', null).execute();
    return (await this.streamKeyOf(slicerId)) ?? undefined;
  }

  /** Slicers not deleted, over every workspace of the database (the cap PLAYLINE_MAX_SLICERS). */
  async countAll(): Promise<number> {
    const row = await this.db
      .selectFrom('managed_slicers')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('state', '!=', 'deleted')
      .executeTakeFirstOrThrow();
    return Number(row.n);
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

/** The slicer row, locked for the transaction (FOR UPDATE on PostgreSQL; SQLite transactions are serialised). */
export function lockSlicer(trx: Trx, engine: Engine, slicerId: string): Promise<SlicerRow | undefined> {
  const query = trx.selectFrom('managed_slicers').selectAll().where('id', '=', slicerId);
  return (engine === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
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
export async function refreshState(
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
  dvr_window_s: config.dvr_window_s ?? null,
  record: config.record === undefined ? null : config.record ? 1 : 0,
});

export function toSlicer(row: SlicerRow): SlicerRecord {
  const config = {
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    region: row.region,
    ingest_protocol: row.ingest_protocol,
    output_profile: row.output_profile,
    ...(row.dvr_window_s !== null && row.dvr_window_s !== undefined ? { dvr_window_s: Number(row.dvr_window_s) } : {}),
    ...(row.record !== null && row.record !== undefined ? { record: Boolean(row.record) } : {}),
  } as SlicerConfig;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    config,
    state: row.state as SlicerState,
    ingestUrl: row.ingest_url,
    sealedStreamKey: row.stream_key_sealed as SealedStreamKey | null,
    latestTaskId: row.latest_task_id,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    hosted: row.host_owner !== null && row.host_expires_at !== null ? { owner: row.host_owner, expiresAt: Number(row.host_expires_at), status: parseLiveStatus(row.live_status) } : undefined,
  };
}

function parseLiveStatus(text: string | null): LiveStatus | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as LiveStatus;
  } catch {
    return null;
  }
}

const numberOrNull = (value: number | null) => (value === null ? null : Number(value));

export function toTask(row: TaskRow): TaskRecord {
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

/** Slicers of the workspace not deleted (its slicer quota); `db` may be the quota's transaction. */
export async function countWorkspaceSlicers(db: Db, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('managed_slicers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('state', '!=', 'deleted')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Workspaces holding at least `n` slicers not deleted (metrics). */
export async function workspacesWithSlicers(db: Db, n: number): Promise<number> {
  const rows = await db
    .selectFrom('managed_slicers')
    .select('workspace_id')
    .where('state', '!=', 'deleted')
    .groupBy('workspace_id')
    .having((eb) => eb.fn.countAll(), '>=', n)
    .execute();
  return rows.length;
}
