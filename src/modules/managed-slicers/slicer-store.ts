import type { SlicerConfig, SlicerState, TaskOperation, TaskState } from './managed-slicers.schema.js';
import type { LiveStatus } from './live-status.js';
import type { TerminalTaskState } from './task-state.js';

/** A managed slicer as stored. Times are Unix milliseconds. */
export interface SlicerRecord {
  id: string;
  workspaceId: string;
  /** The desired configuration: what the latest CREATE or UPDATE task applies. */
  config: SlicerConfig;
  /** Derived from the slicer's tasks (`deriveSlicerState`) whenever one is added or changes. */
  state: SlicerState;
  /** As the provisioner made it, without the stream key (`ingestUrlWithKey` adds it for the owner's eyes). */
  ingestUrl: string | null;
  /** The stream key, sealed; null for a slicer made before stream keys, until one is first needed. */
  sealedStreamKey: SealedStreamKey | null;
  latestTaskId: string;
  createdAt: number;
  updatedAt: number;
  /** The process status its host instance last wrote, and until when that host holds it (ffmpeg provisioner only). */
  hosted?: { owner: string; expiresAt: number; status: LiveStatus | null } | undefined;
}

/** A slicer task as stored. Times are Unix milliseconds. */
export interface TaskRecord {
  id: string;
  /** Store-wide enqueue order: tasks of one slicer run in `seq` order; lists sort on it. */
  seq: number;
  workspaceId: string;
  slicerId: string;
  operation: TaskOperation;
  state: TaskState;
  /** The configuration the task converges the slicer to (snapshot at enqueue time). */
  config: SlicerConfig;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  failureReason: string | null;
  /** Lease: the runner instance working on the task, and until when it may do so unrenewed. */
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  /** How many times the task was claimed; doubles as the lease's fencing token. */
  attempts: number;
}

export interface SlicerWithTask {
  slicer: SlicerRecord;
  /** The slicer's latest task. */
  task: TaskRecord;
}

/**
 * A slicer as its own workspace sees it: with its stream key in clear, which the ingest URL its
 * encoder uses carries. Only ever turned into that workspace's answers; never logged.
 */
export interface SlicerWithKey extends SlicerWithTask {
  streamKey: string;
}

/** A slicer's stream key sealed by the SecretBox (AES-256-GCM): storage accepts keys only in this form. */
export type SealedStreamKey = string & { readonly __sealed: 'SlicerStreamKey' };

/**
 * What `RunnableSlicer` (ffmpeg-provisioner.ts) gains: the stream key the restarted process
 * demands of its encoder. Kept apart until that interface carries the field itself.
 */
export interface RunnableSlicerKey {
  streamKey: string;
}

/** Identifies one claim of a task: writes with an outdated fence are refused. */
export interface LeaseFence {
  owner: string;
  attempt: number;
}

export interface ClaimedTask extends TaskRecord {
  /** True when the task was IN_PROGRESS under an expired lease (its runner died or stopped). */
  resumed: boolean;
}

export interface ClaimInput {
  owner: string;
  now: number;
  leaseMs: number;
}

export interface FinishInput {
  taskId: string;
  fence: LeaseFence;
  state: TerminalTaskState;
  failureReason: string | null;
  /** New ingest URL of the slicer; `undefined` leaves it unchanged. */
  ingestUrl: string | null | undefined;
  now: number;
}

/**
 * The task queue as the runner sees it. Every method is atomic. A task is claimable when it is
 * PENDING, or IN_PROGRESS under an expired lease, and no older task of its slicer is unfinished;
 * a claim takes the oldest claimable task (PENDING -> IN_PROGRESS is persisted by the claim).
 * With several instances on one database, at most one of them holds a task's lease.
 */
export interface SlicerTaskStore {
  /**
   * Expires the leases held by `owner` (every lease when `owner` is undefined), so their
   * IN_PROGRESS tasks can be claimed again at once. Returns how many were released.
   */
  releaseLeases(now: number, owner?: string): Promise<number>;
  claimNextTask(input: ClaimInput): Promise<ClaimedTask | undefined>;
  /** Extends the lease; false when the fence is outdated (the task was taken over or finished). */
  renewLease(taskId: string, fence: LeaseFence, leaseExpiresAt: number): Promise<boolean>;
  /** Gives the task up (it stays IN_PROGRESS, claimable at once); false when the fence is outdated. */
  releaseLease(taskId: string, fence: LeaseFence, now: number): Promise<boolean>;
  /** IN_PROGRESS -> COMPLETED | FAILED and the slicer's new state, together; false when the fence is outdated. */
  finishTask(input: FinishInput): Promise<boolean>;
}

export type NewSlicer = Pick<SlicerRecord, 'id' | 'workspaceId' | 'config' | 'createdAt'> & { sealedStreamKey: SealedStreamKey };
export type NewTask = Pick<TaskRecord, 'id' | 'operation' | 'createdAt'>;

export interface EnqueueInput {
  workspaceId: string;
  slicerId: string;
  task: NewTask;
  /** Fields to change in the desired configuration (UPDATE), merged inside the transaction. */
  configPatch?: Partial<SlicerConfig>;
  /** A new stream key (rotation), stored with the task so a refused enqueue leaves the old one. */
  sealedStreamKey?: SealedStreamKey;
}

export type EnqueueOutcome =
  | { kind: 'enqueued'; slicer: SlicerRecord; task: TaskRecord }
  | { kind: 'not_found' }
  | { kind: 'deletion_pending' };

export interface TaskFilter {
  state?: TaskState | undefined;
  operation?: TaskOperation | undefined;
  slicerId?: string | undefined;
}

export interface Page<T> {
  items: T[];
  /** Items matching the filter over all pages. */
  total: number;
}

/** Position after which a slicer list page starts (newest first). */
export interface SlicerCursor {
  createdAt: number;
  id: string;
}

/**
 * The stored stream keys, by slicer id whatever its workspace (the runner and the host leases
 * ask by id). A key once stored is only ever replaced (rotation), never removed.
 */
export interface StreamKeyStore {
  /** The slicer's sealed key: null while it has none, undefined when there is no such slicer. */
  streamKeyOf(slicerId: string): Promise<SealedStreamKey | null | undefined>;
  /**
   * Stores `sealed` unless the slicer has a key already (two first readers racing both keep the
   * winner's); the sealed key it has afterwards, undefined when there is no such slicer.
   */
  fillStreamKey(slicerId: string, sealed: SealedStreamKey): Promise<SealedStreamKey | undefined>;
}

/**
 * Slicers and tasks as the service sees them, always within one workspace. Slicers whose
 * DELETE task completed are gone from here (their tasks stay listed).
 */
export interface SlicerStore {
  /**
   * Inserts the slicer and its CREATE task together; with `maxPerWorkspace`, only while the
   * workspace holds fewer slicers (decided one create at a time per workspace), else throws
   * 409 quota_exceeded.
   */
  createSlicer(slicer: NewSlicer, task: NewTask, maxPerWorkspace?: number): Promise<SlicerWithTask>;
  /** Adds a task to a live slicer unless a DELETE is already queued for it. */
  enqueueTask(input: EnqueueInput): Promise<EnqueueOutcome>;
  findSlicer(workspaceId: string, slicerId: string): Promise<SlicerWithTask | undefined>;
  /** Newest first. */
  listSlicers(workspaceId: string, limit: number, after?: SlicerCursor): Promise<Page<SlicerWithTask>>;
  findTask(workspaceId: string, taskId: string): Promise<TaskRecord | undefined>;
  /** Newest first; at most `limit` (every match when undefined); `beforeSeq` starts after that task. */
  listTasks(workspaceId: string, filter: TaskFilter, limit: number | undefined, beforeSeq?: number): Promise<Page<TaskRecord>>;
}
