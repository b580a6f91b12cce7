import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { decodeCursor, decodeTimeIdCursor, encodeCursor, invalidCursor } from '../../platform/http/cursor.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { LiveStatus } from './live-slicer-process.js';
import type { SlicerCreateBody, SlicerUpdateBody, TaskOperation, TaskState } from './managed-slicers.schema.js';
import type { EnqueueOutcome, SealedStreamKey, SlicerCursor, SlicerRecord, SlicerStore, SlicerWithKey, SlicerWithTask, TaskRecord } from './slicer-store.js';
import type { SlicerStreamKeys } from './stream-key.js';

export interface ManagedSlicerServiceDeps {
  store: SlicerStore;
  /** Seals new stream keys and opens stored ones for the owner's answers. */
  streamKeys: SlicerStreamKeys;
  clock: Clock;
  ids: IdGenerator;
  /** Regions a slicer may run in (PLAYLINE_REGIONS). */
  regions: readonly string[];
  /** A slicer's DVR window: the default and the largest allowed (PLAYLINE_LIVE_DVR_WINDOW_S). Default 7200. */
  maxDvrWindowS?: number;
  /**
   * Called after a task was enqueued, to wake the task runner; the answer waits for it, so it
   * can show the task IN_PROGRESS when the runner took it at once.
   */
  onTaskEnqueued?: () => void | Promise<void>;
  /** Slicers one workspace may hold (PLAYLINE_QUOTA_SLICERS); no quota when undefined. */
  maxSlicersPerWorkspace?: number;
  /** Slicers the deployment may hold (PLAYLINE_MAX_SLICERS), counted by `countSlicers`; no cap when it answers undefined. */
  maxSlicers?: () => number | undefined;
  countSlicers?: () => Promise<number>;
  /** What a slicer's process is doing, when it runs on this instance (real provisioner). */
  liveStatus?: (slicerId: string) => LiveStatus | undefined;
  /** Throws (media_tools_missing) when slicers cannot run here: a create is refused at once instead of making a slicer that receives nothing. */
  assertRunnable?: () => void;
}

export interface PageRequest {
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface TaskQuery extends PageRequest {
  state?: TaskState | undefined;
  operation?: TaskOperation | undefined;
  slicerId?: string | undefined;
}

export interface PageResult<T> {
  items: T[];
  total: number;
  /** Cursor of the next page; undefined on the last page. */
  nextCursor: string | undefined;
}

const DEFAULT_LIMIT = 50;

/**
 * Managed slicers of a workspace. Every change is recorded as a task and answered at once;
 * the task runner carries it out in the background. Never sees HTTP. Every slicer it answers
 * with carries its stream key in clear: only ever call it for the workspace that owns them.
 */
export class ManagedSlicerService {
  constructor(private readonly deps: ManagedSlicerServiceDeps) {}

  async create(workspaceId: string, body: SlicerCreateBody): Promise<SlicerWithKey> {
    this.deps.assertRunnable?.();
    this.checkRegion(body.region);
    this.checkDvrWindow(body.dvr_window_s);
    body = { ...body, dvr_window_s: body.dvr_window_s ?? this.maxDvrWindowS };
    const maxSlicers = this.deps.maxSlicers?.();
    const countSlicers = this.deps.countSlicers;
    if (maxSlicers !== undefined && countSlicers && (await countSlicers()) >= maxSlicers) {
      throw new AppError('conflict', `This deployment runs at most ${maxSlicers} managed slicers over every workspace (PLAYLINE_MAX_SLICERS): delete one before creating another`);
    }
    const now = this.deps.clock.now();
    const created = await this.deps.store.createSlicer(
      { id: this.deps.ids.hex(), workspaceId, config: body, createdAt: now, sealedStreamKey: this.deps.streamKeys.sealNew() },
      { id: this.deps.ids.uuid(), operation: 'CREATE', createdAt: now },
      this.deps.maxSlicersPerWorkspace,
    );
    return this.afterEnqueue(workspaceId, created);
  }

  async update(workspaceId: string, slicerId: string, patch: SlicerUpdateBody): Promise<SlicerWithKey> {
    if (Object.keys(patch).length === 0) {
      throw new AppError('validation_failed', 'Give at least one field to change', { errors: [{ path: '', message: 'must not be empty' }] });
    }
    if (patch.region !== undefined) this.checkRegion(patch.region);
    this.checkDvrWindow(patch.dvr_window_s);
    return this.enqueue(workspaceId, slicerId, 'UPDATE', patch);
  }

  async restart(workspaceId: string, slicerId: string): Promise<SlicerWithKey> {
    return this.enqueue(workspaceId, slicerId, 'RESTART');
  }

  /**
   * Replaces the slicer's stream key and restarts its process with the new one, which ends the
   * connection of an encoder using the old key. The key is stored with the RESTART task: a slicer
   * being deleted (409) keeps its key.
   */
  async rotateStreamKey(workspaceId: string, slicerId: string): Promise<SlicerWithKey> {
    return this.enqueue(workspaceId, slicerId, 'RESTART', undefined, this.deps.streamKeys.sealNew());
  }

  async delete(workspaceId: string, slicerId: string): Promise<SlicerWithKey> {
    return this.enqueue(workspaceId, slicerId, 'DELETE');
  }

  /**
   * The slicer process's status: as it is now when it runs on this instance, else as its host
   * instance last stored it while that host's lease holds; undefined when it runs nowhere.
   */
  liveStatusOf(slicer: SlicerRecord): LiveStatus | undefined {
    const here = this.deps.liveStatus?.(slicer.id);
    if (here) return here;
    const hosted = slicer.hosted;
    const now = this.deps.clock.now();
    return hosted && hosted.expiresAt > now && hosted.status ? hosted.status : undefined;
  }

  async get(workspaceId: string, slicerId: string): Promise<SlicerWithKey> {
    const found = await this.deps.store.findSlicer(workspaceId, slicerId);
    if (!found) throw slicerNotFound(slicerId);
    return this.withKey(found);
  }

  async list(workspaceId: string, page: PageRequest): Promise<PageResult<SlicerWithKey>> {
    const limit = page.limit ?? DEFAULT_LIMIT;
    const after = page.cursor === undefined ? undefined : decodeSlicerCursor(page.cursor);
    const { items, total } = await this.deps.store.listSlicers(workspaceId, limit + 1, after);
    const shown = items.slice(0, limit);
    const last = shown.at(-1);
    const nextCursor = items.length > limit && last ? encodeCursor([last.slicer.createdAt, last.slicer.id]) : undefined;
    return { items: await Promise.all(shown.map((found) => this.withKey(found))), total, nextCursor };
  }

  async getTask(workspaceId: string, taskId: string): Promise<TaskRecord> {
    const task = await this.deps.store.findTask(workspaceId, taskId);
    if (!task) throw new AppError('not_found', `No slicer task ${taskId}`);
    return task;
  }

  /**
   * Tasks of the workspace, newest first. Without `limit` every task (after the cursor, if one
   * is given) in one answer: the spec gives the list no parameters and published clients read
   * one page. With `limit`, a page and the cursor of the next one.
   */
  async listTasks(workspaceId: string, query: TaskQuery): Promise<PageResult<TaskRecord>> {
    const { limit } = query;
    const beforeSeq = query.cursor === undefined ? undefined : decodeTaskCursor(query.cursor);
    const filter = { state: query.state, operation: query.operation, slicerId: query.slicerId };
    const { items, total } = await this.deps.store.listTasks(workspaceId, filter, limit === undefined ? undefined : limit + 1, beforeSeq);
    if (limit === undefined) return { items, total, nextCursor: undefined };
    const shown = items.slice(0, limit);
    const last = shown.at(-1);
    return { items: shown, total, nextCursor: items.length > limit && last ? encodeCursor([last.seq]) : undefined };
  }

  private async enqueue(
    workspaceId: string,
    slicerId: string,
    operation: TaskOperation,
    configPatch?: SlicerUpdateBody,
    sealedStreamKey?: SealedStreamKey,
  ): Promise<SlicerWithKey> {
    const outcome: EnqueueOutcome = await this.deps.store.enqueueTask({
      workspaceId,
      slicerId,
      task: { id: this.deps.ids.uuid(), operation, createdAt: this.deps.clock.now() },
      ...(configPatch ? { configPatch } : {}),
      ...(sealedStreamKey !== undefined ? { sealedStreamKey } : {}),
    });
    if (outcome.kind === 'not_found') throw slicerNotFound(slicerId);
    if (outcome.kind === 'deletion_pending') {
      throw new AppError('slicer_deletion_pending', `Slicer ${slicerId} is being deleted; it takes no further ${operation}`);
    }
    return this.afterEnqueue(workspaceId, { slicer: outcome.slicer, task: outcome.task });
  }

  /** Wakes the runner, then answers with the slicer and task as they are now (the runner may have taken the task). */
  private async afterEnqueue(workspaceId: string, enqueued: SlicerWithTask): Promise<SlicerWithKey> {
    if (!this.deps.onTaskEnqueued) return this.withKey(enqueued);
    await this.deps.onTaskEnqueued();
    const now = await this.deps.store.findSlicer(workspaceId, enqueued.slicer.id);
    if (now && now.task.id === enqueued.task.id) return this.withKey(now);
    // A later change was enqueued meanwhile, or the slicer is gone (its DELETE completed).
    const task = await this.deps.store.findTask(workspaceId, enqueued.task.id);
    return this.withKey({ slicer: enqueued.slicer, task: task ?? enqueued.task });
  }

  /** The slicer with its key in clear (one is made now for a slicer older than stream keys). */
  private async withKey(found: SlicerWithTask): Promise<SlicerWithKey> {
    const streamKey = await this.deps.streamKeys.keyOf(found.slicer);
    if (streamKey === undefined) throw slicerNotFound(found.slicer.id);
    return { ...found, streamKey };
  }

  private get maxDvrWindowS(): number {
    return this.deps.maxDvrWindowS ?? 7200;
  }

  private checkDvrWindow(seconds: number | undefined): void {
    if (seconds === undefined || seconds <= this.maxDvrWindowS) return;
    throw new AppError('validation_failed', `dvr_window_s ${seconds} is longer than this deployment allows`, {
      errors: [{ path: '/dvr_window_s', message: `must be at most ${this.maxDvrWindowS} (PLAYLINE_LIVE_DVR_WINDOW_S)` }],
    });
  }

  private checkRegion(region: string): void {
    if (this.deps.regions.includes(region)) return;
    throw new AppError('validation_failed', `Unknown region ${region}`, {
      errors: [{ path: '/region', message: `must be one of: ${this.deps.regions.join(', ')}` }],
    });
  }
}

const slicerNotFound = (slicerId: string) => new AppError('not_found', `No managed slicer ${slicerId}`);

function decodeTaskCursor(cursor: string): number {
  const value = decodeCursor(cursor);
  if (Array.isArray(value) && value.length === 1 && Number.isSafeInteger(value[0])) return value[0] as number;
  throw invalidCursor();
}

function decodeSlicerCursor(cursor: string): SlicerCursor {
  const { time, id } = decodeTimeIdCursor(cursor);
  return { createdAt: time, id };
}
