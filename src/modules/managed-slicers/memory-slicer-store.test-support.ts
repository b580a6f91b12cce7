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
  SealedStreamKey,
  SlicerCursor,
  SlicerRecord,
  SlicerStore,
  SlicerTaskStore,
  SlicerWithTask,
  StreamKeyStore,
  TaskFilter,
  TaskRecord,
} from './slicer-store.js';
import { quotaExceeded } from '../../platform/quota/workspace-quotas.js';
import { assertTaskTransition, deriveSlicerState, isTerminal } from './task-state.js';

/**
 * In-memory SlicerStore and SlicerTaskStore for unit tests. Follows the same contract as the
 * Kysely repository; every read returns a copy so callers cannot change stored state behind
 * its back.
 */
export class InMemorySlicerStore implements SlicerStore, SlicerTaskStore, StreamKeyStore {
  private readonly slicers = new Map<string, SlicerRecord>();
  private readonly tasks: TaskRecord[] = [];
  private seq = 0;

  async createSlicer(input: NewSlicer, newTask: NewTask, maxPerWorkspace?: number): Promise<SlicerWithTask> {
    const held = [...this.slicers.values()].filter((s) => s.workspaceId === input.workspaceId && s.state !== 'deleted').length;
    if (maxPerWorkspace !== undefined && held >= maxPerWorkspace) throw quotaExceeded('slicers', maxPerWorkspace, held);
    const task = this.insertTask(input.workspaceId, input.id, newTask, input.config);
    const slicer: SlicerRecord = {
      ...structuredClone(input),
      state: 'provisioning',
      ingestUrl: null,
      latestTaskId: task.id,
      updatedAt: input.createdAt,
    };
    this.slicers.set(slicer.id, slicer);
    this.refreshSlicerState(slicer.id, input.createdAt);
    return { slicer: structuredClone(slicer), task: structuredClone(task) };
  }

  async enqueueTask(input: EnqueueInput): Promise<EnqueueOutcome> {
    const slicer = this.liveSlicer(input.workspaceId, input.slicerId);
    if (!slicer) return { kind: 'not_found' };
    const deleting = this.tasks.some((t) => t.slicerId === slicer.id && t.operation === 'DELETE' && !isTerminal(t.state));
    if (deleting) return { kind: 'deletion_pending' };
    slicer.config = { ...slicer.config, ...structuredClone(input.configPatch ?? {}) };
    const task = this.insertTask(slicer.workspaceId, slicer.id, input.task, slicer.config);
    slicer.latestTaskId = task.id;
    if (input.sealedStreamKey !== undefined) slicer.sealedStreamKey = input.sealedStreamKey;
    this.refreshSlicerState(slicer.id, input.task.createdAt);
    return { kind: 'enqueued', slicer: structuredClone(slicer), task: structuredClone(task) };
  }

  async findSlicer(workspaceId: string, slicerId: string): Promise<SlicerWithTask | undefined> {
    const slicer = this.liveSlicer(workspaceId, slicerId);
    return slicer && this.withLatestTask(slicer);
  }

  async listSlicers(workspaceId: string, limit: number, after?: SlicerCursor): Promise<Page<SlicerWithTask>> {
    const all = [...this.slicers.values()]
      .filter((s) => s.workspaceId === workspaceId && s.state !== 'deleted')
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const start = after ? all.filter((s) => s.createdAt > after.createdAt || (s.createdAt === after.createdAt && s.id >= after.id)).length : 0;
    return { items: all.slice(start, start + limit).map((s) => this.withLatestTask(s)), total: all.length };
  }

  async streamKeyOf(slicerId: string): Promise<SealedStreamKey | null | undefined> {
    return this.slicers.get(slicerId)?.sealedStreamKey;
  }

  async fillStreamKey(slicerId: string, sealed: SealedStreamKey): Promise<SealedStreamKey | undefined> {
    const slicer = this.slicers.get(slicerId);
    if (!slicer) return undefined;
    slicer.sealedStreamKey ??= sealed;
    return slicer.sealedStreamKey;
  }

  async findTask(workspaceId: string, taskId: string): Promise<TaskRecord | undefined> {
    const task = this.tasks.find((t) => t.id === taskId && t.workspaceId === workspaceId);
    return task && structuredClone(task);
  }

  async listTasks(workspaceId: string, filter: TaskFilter, limit: number | undefined, beforeSeq?: number): Promise<Page<TaskRecord>> {
    const matching = this.tasks
      .filter(
        (t) =>
          t.workspaceId === workspaceId &&
          (filter.state === undefined || t.state === filter.state) &&
          (filter.operation === undefined || t.operation === filter.operation) &&
          (filter.slicerId === undefined || t.slicerId === filter.slicerId),
      )
      .sort((a, b) => b.seq - a.seq);
    const page = matching.filter((t) => beforeSeq === undefined || t.seq < beforeSeq).slice(0, limit ?? matching.length);
    return { items: structuredClone(page), total: matching.length };
  }

  async releaseLeases(now: number, owner?: string): Promise<number> {
    const held = this.tasks.filter((t) => t.state === 'IN_PROGRESS' && (owner === undefined || t.leaseOwner === owner));
    for (const task of held) {
      task.leaseExpiresAt = now;
      task.updatedAt = now;
    }
    return held.length;
  }

  async claimNextTask({ owner, now, leaseMs }: ClaimInput): Promise<ClaimedTask | undefined> {
    const task = this.tasks.find(
      (t) =>
        (t.state === 'PENDING' || (t.state === 'IN_PROGRESS' && (t.leaseExpiresAt ?? 0) <= now)) &&
        !this.tasks.some((o) => o.slicerId === t.slicerId && o.seq < t.seq && !isTerminal(o.state)),
    );
    if (!task) return undefined;
    const resumed = task.state === 'IN_PROGRESS';
    if (!resumed) assertTaskTransition(task.state, 'IN_PROGRESS');
    task.state = 'IN_PROGRESS';
    task.leaseOwner = owner;
    task.leaseExpiresAt = now + leaseMs;
    task.attempts += 1;
    task.startedAt ??= now;
    task.updatedAt = now;
    return { ...structuredClone(task), resumed };
  }

  async renewLease(taskId: string, fence: LeaseFence, leaseExpiresAt: number): Promise<boolean> {
    const task = this.fenced(taskId, fence);
    if (!task) return false;
    task.leaseExpiresAt = leaseExpiresAt;
    return true;
  }

  async releaseLease(taskId: string, fence: LeaseFence, now: number): Promise<boolean> {
    const task = this.fenced(taskId, fence);
    if (!task) return false;
    task.leaseExpiresAt = now;
    task.updatedAt = now;
    return true;
  }

  async finishTask(input: FinishInput): Promise<boolean> {
    const task = this.fenced(input.taskId, input.fence);
    if (!task) return false;
    assertTaskTransition(task.state, input.state);
    task.state = input.state;
    task.failureReason = input.failureReason;
    task.finishedAt = input.now;
    task.updatedAt = input.now;
    task.leaseOwner = null;
    task.leaseExpiresAt = null;
    const slicer = this.slicers.get(task.slicerId);
    if (slicer && input.ingestUrl !== undefined) slicer.ingestUrl = input.ingestUrl;
    this.refreshSlicerState(task.slicerId, input.now);
    return true;
  }

  /** Test hook: every stored task, oldest first. */
  allTasks(): TaskRecord[] {
    return structuredClone(this.tasks);
  }

  /** Test hook: the slicer as one made before stream keys existed (no key stored). */
  forgetStreamKey(slicerId: string): void {
    const slicer = this.slicers.get(slicerId);
    if (slicer) slicer.sealedStreamKey = null;
  }

  /** Test hook: stores a task as if an earlier process had left it so (e.g. IN_PROGRESS). */
  putTask(task: Omit<TaskRecord, 'seq'>): void {
    this.tasks.push({ ...structuredClone(task), seq: ++this.seq });
  }

  private insertTask(workspaceId: string, slicerId: string, input: NewTask, config: TaskRecord['config']): TaskRecord {
    const task: TaskRecord = {
      ...input,
      seq: ++this.seq,
      workspaceId,
      slicerId,
      state: 'PENDING',
      config: structuredClone(config),
      updatedAt: input.createdAt,
      startedAt: null,
      finishedAt: null,
      failureReason: null,
      leaseOwner: null,
      leaseExpiresAt: null,
      attempts: 0,
    };
    this.tasks.push(task);
    return task;
  }

  private refreshSlicerState(slicerId: string, now: number): void {
    const slicer = this.slicers.get(slicerId);
    if (!slicer) return;
    const own = this.tasks.filter((t) => t.slicerId === slicerId);
    const headOpen = own.find((t) => !isTerminal(t.state));
    const lastFinished = own.filter((t) => isTerminal(t.state)).at(-1);
    slicer.state = deriveSlicerState({ headOpen: headOpen?.operation, lastFinished });
    slicer.updatedAt = now;
  }

  private liveSlicer(workspaceId: string, slicerId: string): SlicerRecord | undefined {
    const slicer = this.slicers.get(slicerId);
    return slicer && slicer.workspaceId === workspaceId && slicer.state !== 'deleted' ? slicer : undefined;
  }

  private withLatestTask(slicer: SlicerRecord): SlicerWithTask {
    const task = this.tasks.find((t) => t.id === slicer.latestTaskId);
    if (!task) throw new Error(`slicer ${slicer.id} has no task ${slicer.latestTaskId}`);
    return { slicer: structuredClone(slicer), task: structuredClone(task) };
  }

  private fenced(taskId: string, fence: LeaseFence): TaskRecord | undefined {
    return this.tasks.find(
      (t) => t.id === taskId && t.state === 'IN_PROGRESS' && t.leaseOwner === fence.owner && t.attempts === fence.attempt,
    );
  }
}
