import type { Db } from '../../platform/db/database.js';
import type { AssetState, RenditionSummary } from './assets.schema.js';

/** An asset as stored. Times are Unix milliseconds. */
export interface AssetRecord {
  id: string;
  workspaceId: string;
  title: string | null;
  state: AssetState;
  progress: number;
  sizeBytes: number;
  /** Packaged duration: so far while `playable`, in full once `ready`; null before. */
  durationMs: number | null;
  /** Highest first (playable and ready; empty before). */
  renditions: RenditionSummary[];
  failureReason: string | null;
  /** A recorded live event: its slicer, start and end; null for uploads. */
  recording: { slicerId: string; startedAt: number; endedAt: number } | null;
  createdAt: number;
  updatedAt: number;
}

/** A recorded live event made an asset, `ready` at once (nothing to package). */
export interface NewRecording {
  id: string;
  workspaceId: string;
  title: string;
  slicerId: string;
  startedAt: number;
  endedAt: number;
  durationMs: number;
  renditions: RenditionSummary[];
  /** Bytes of its files (its storage). */
  storedBytes: number;
  createdAt: number;
}

export type NewAsset = Pick<AssetRecord, 'id' | 'workspaceId' | 'title' | 'sizeBytes' | 'createdAt'>;

export interface Page<T> {
  items: T[];
  /** Items matching the filter over all pages. */
  total: number;
}

/** What a list of assets is narrowed to. */
export interface AssetFilter {
  state?: AssetState | undefined;
  /** Recordings of this slicer only. */
  sourceSlicerId?: string | undefined;
}

/** Position after which a list page starts (newest first). */
export interface AssetCursor {
  createdAt: number;
  id: string;
}

/** Assets as the service sees them, always within one workspace. */
export interface AssetStore {
  /**
   * Inserts the asset (`uploaded`) and its queued packaging job together; `admit` runs first in
   * the same transaction (the quota checks) and refuses by throwing.
   */
  insertWithJob(asset: NewAsset, admit?: (trx: Db) => Promise<void>): Promise<AssetRecord>;
  /** Queues a `failed` asset of the workspace for packaging again (`uploaded`, a new job); false when it is not `failed`. */
  requeueFailed(workspaceId: string, assetId: string, now: number): Promise<boolean>;
  find(workspaceId: string, assetId: string): Promise<AssetRecord | undefined>;
  /** Newest first; at most `limit` (every match when undefined), starting after `after`. */
  list(workspaceId: string, filter: AssetFilter, limit: number | undefined, after?: AssetCursor): Promise<Page<AssetRecord>>;
  /** Inserts a recorded live event as a ready asset (no packaging job). */
  insertRecording(recording: NewRecording): Promise<AssetRecord>;
  updateTitle(workspaceId: string, assetId: string, title: string, now: number): Promise<AssetRecord | undefined>;
  /** Removes the asset and its job; false when there was none in that workspace. */
  delete(workspaceId: string, assetId: string): Promise<boolean>;
}

/** Identifies one claim of a job: writes with an outdated fence are refused. */
export interface LeaseFence {
  owner: string;
  attempt: number;
}

export interface ClaimedJob {
  assetId: string;
  workspaceId: string;
  /** This claim's number (1 for the first); more than 1 means an earlier run was interrupted. */
  attempts: number;
}

export interface ClaimInput {
  owner: string;
  now: number;
  leaseMs: number;
}

export interface PackagedResult {
  durationMs: number;
  renditions: RenditionSummary[];
  /** Bytes of the packaged output on disk (the workspace's storage quota); unchanged when undefined. */
  storedBytes?: number;
}

/**
 * The packaging queue as the runner sees it. Every method is atomic. A job is claimable when
 * no live lease holds it; claiming it sets its asset `processing`. With several instances on
 * one database, at most one of them holds a job's lease, and only that claim can finish it.
 */
export interface AssetJobStore {
  /** Expires the leases held by `owner` (every lease when undefined); returns how many. */
  releaseLeases(now: number, owner?: string): Promise<number>;
  /** Claims the oldest claimable job. */
  claimNext(input: ClaimInput): Promise<ClaimedJob | undefined>;
  /** Extends the lease; false when the fence is outdated (taken over, or the asset deleted). */
  renewLease(assetId: string, fence: LeaseFence, leaseExpiresAt: number): Promise<boolean>;
  /** Gives the job back to the queue (its asset `uploaded` again, nothing playable); false when the fence is outdated. */
  releaseLease(assetId: string, fence: LeaseFence, now: number): Promise<boolean>;
  /**
   * Makes the asset of a job this fence holds `playable` (from `processing`, or again with more
   * packaged): the duration and renditions packaged so far. False when the fence is outdated.
   */
  setPlayable(assetId: string, fence: LeaseFence, result: Omit<PackagedResult, 'storedBytes'>, now: number): Promise<boolean>;
  /** Records packaging progress of a job this fence holds. */
  setProgress(assetId: string, fence: LeaseFence, percent: number, now: number): Promise<boolean>;
  /** Removes the job and makes its asset `ready`; false when the fence is outdated. */
  finishReady(assetId: string, fence: LeaseFence, result: PackagedResult, now: number): Promise<boolean>;
  /**
   * Removes the job and makes its asset `failed`; false when the fence is outdated. `storedBytes`:
   * what it still holds on disk (its upload, kept for a retry), counted in the storage quota.
   */
  finishFailed(assetId: string, fence: LeaseFence, reason: string, now: number, storedBytes?: number): Promise<boolean>;
  /** Whether the asset still exists (after a lost lease: deleted, or taken over). */
  exists(assetId: string): Promise<boolean>;
}

/** Counts for the metrics, over the whole database (every instance's assets and jobs). */
export interface AssetCounts {
  byState: Record<AssetState, number>;
  jobsQueued: number;
  jobsRunning: number;
}
