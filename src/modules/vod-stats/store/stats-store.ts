import type { PlaybackEvent } from '../events.schema.js';

/** Latency samples of one kind (manifest or ad) over a window; `count` 0 means no sample. */
export interface LatencySummary {
  min: number;
  max: number;
  sum: number;
  count: number;
}

/** The statistics of one window (WINDOW_S seconds), before rendering. */
export interface WindowStats {
  requests: number;
  manifest: number;
  ad: number;
  new: number;
  /** Playback error code -> distinct sessions with that code. */
  errors: ReadonlyMap<number, number>;
  manifestLatency: LatencySummary;
  adLatency: LatencySummary;
}

/**
 * One asset's statistics: the window ending with the second of its anchor `ts`. A store may
 * hand out the same object again while the asset is unchanged: treat it as read-only.
 */
export interface AssetStats {
  owner: string;
  assetId: string;
  /** The most recent session start (or, before any start, the most recent event), Unix ms. */
  ts: number;
  stats: WindowStats;
}

/**
 * A workspace's statistics over the WINDOW_S seconds ending with the query's second, or with
 * stats_delay_ms the WINDOW_S seconds ending `delay` before the query (see summaryEnd).
 */
export interface OwnerSummary {
  owner: string;
  /** Where the window ends: the time of the query (minus the stats delay), Unix ms. */
  ts: number;
  stats: WindowStats;
}

/** One minute of history: its counters (as a window would sum them) and its playback quality. */
export interface HistoryPoint {
  /** The minute's start, Unix ms. */
  ts: number;
  stats: WindowStats;
  /** Rebuffer reports (CMCD buffer starvation). */
  rebuffers: number;
  /** Startup times of sessions started in the minute (playback request to first media segment), ms. */
  startup: { count: number; sum: number; max: number };
}

/** What a store holds, for tests and metrics (memory really freed shows up here). */
export interface StoreSize {
  owners: number;
  assets: number;
  /** Per-asset buckets: per-second detail and per-minute history. */
  buckets: number;
  /** Dedupe entries (sessions, and session/error-code pairs): per asset, and of workspace-only events per workspace. */
  sessions: number;
  /** Per-workspace buckets: per-second totals (summary) and per-minute history. */
  ownerBuckets: number;
  /** Events accepted but not yet visible (stats_delay_ms). */
  pendingEvents: number;
}

/** What counting a batch did beyond counting. */
export interface RecordResult {
  /**
   * Positions (in the batch) of events not counted because they named a new asset of a
   * workspace already holding the maximum number of assets. Empty with a stats delay (the batch
   * is counted later; drops then show in the store's dropped counter only).
   */
  dropped: readonly number[];
}

export interface PruneResult {
  assetsRemoved: number;
  bucketsRemoved: number;
  sessionsRemoved: number;
}

/**
 * Where VOD statistics live. Every method returns a Promise so a shared implementation
 * (Redis, cluster mode) can stand behind the same interface as the embedded one.
 */
export interface StatsStore {
  /** Counts accepted events received at `receivedAt` (Unix ms). Batches must come in journal order. */
  record(events: readonly PlaybackEvent[], receivedAt: number): Promise<RecordResult>;
  /** One asset of `owner`, or undefined when it has no statistics (unknown or expired). */
  get(owner: string, assetId: string): Promise<AssetStats | undefined>;
  /** The known assets among `assetIds`, in the order asked, unknown ones left out. */
  search(owner: string, assetIds: readonly string[]): Promise<AssetStats[]>;
  /** Up to `limit` assets with the most new sessions in their window; ties by most recent ts. */
  top(owner: string, limit: number): Promise<AssetStats[]>;
  /** The workspace's last WINDOW_S seconds, ending with the second of the query (minus the stats delay). */
  summary(owner: string): Promise<OwnerSummary>;
  /**
   * Per-minute history over [from, to] (Unix ms) clipped to the 24-hour serving window, ascending,
   * minutes without data left out: the workspace's (no `assetId`), or one asset's (undefined when
   * it has no statistics).
   */
  history(owner: string, assetId: string | undefined, from: number, to: number): Promise<HistoryPoint[] | undefined>;
  /** Drops what no query can show any more (expired assets, dead buckets and sessions). */
  prune(): Promise<PruneResult>;
  /**
   * Forgets every statistic of a workspace (deleted): its assets, summary, history and marks,
   * and its events still waiting for the stats delay.
   */
  eraseOwner(owner: string): Promise<void>;
  /** The workspaces the store holds statistics for (to erase those of deleted workspaces). */
  ownerIds(): Promise<string[]>;
  size(): Promise<StoreSize>;
}
