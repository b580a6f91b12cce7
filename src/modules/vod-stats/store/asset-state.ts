import { BucketSeries, F, QOE_STRIDE } from './bucket-series.js';
import { RankedAssets } from './ranked-assets.js';
import type { Rankable } from './ranked-assets.js';
import { MarkTable, NONE } from './session-marks.js';
import type { AssetStats, WindowStats } from './stats-store.js';
import { FIRST_START_GRACE_S, WINDOW_S, secondOf, windowStart } from '../stats-window.js';
import { WorkspaceMarks } from './workspace-marks.js';

export { NONE };

const RANKED = 1;
const DIRTY = 2;
const REMOVED = 4;

/** The three session kinds of a session mark ([hash, manifest, ad, start]): MarkTable.second(at, kind). */
export const MARK = { manifest: 1, ad: 2, start: 3 } as const;

/**
 * The statistics state of one asset of one workspace:
 * - `detail`: per-second counters from `floor` on (the window and anything after it), which
 *   windows are summed from, exact to the second;
 * - `history`: per-minute counters over the serving window (for history and for events too old
 *   for any window: an accepted event is always counted somewhere);
 * - dedupe marks per session and kind, and per session and error code, at the second counted.
 */
export class AssetState implements Rankable {
  /** Most recent session start (Unix ms), NONE before the first. */
  startTs = NONE;
  /** Most recent event of any kind (Unix ms). */
  latestTs = NONE;
  /**
   * First second whose detail still counts. Only moves forward (so what a window shows never
   * depends on when prune ran): the window's first second, or before any start the grace
   * before it (see FIRST_START_GRACE_S).
   */
  floor = NONE;
  detail = new BucketSeries();
  history = new BucketSeries();
  /** Playback quality per minute (rebuffers, startup), only once a player reported any. */
  qoe: BucketSeries | null = null;
  sessions: MarkTable | null = null;
  errorMarks: MarkTable | null = null;
  /** Distinct started sessions in the current window: the ranking key. */
  windowNew = 0;
  rankNew = 0;
  rankTs = 0;
  /** The last statistics read, until the asset changes: repeated reads share one object (and its rendering). */
  cachedStats: AssetStats | undefined = undefined;
  /** `ranked`, `dirty` and `removed` in one small integer: one field instead of three, per asset. */
  private flags = 0;

  /** In the ranking. */
  get ranked(): boolean {
    return (this.flags & RANKED) !== 0;
  }
  set ranked(on: boolean) {
    this.flags = on ? this.flags | RANKED : this.flags & ~RANKED;
  }

  /** Waiting in the ranking's backlog. */
  get dirty(): boolean {
    return (this.flags & DIRTY) !== 0;
  }
  set dirty(on: boolean) {
    this.flags = on ? this.flags | DIRTY : this.flags & ~DIRTY;
  }

  /** Forgotten (its workspace deleted, or pruned): skipped where the backlog still names it. */
  get removed(): boolean {
    return (this.flags & REMOVED) !== 0;
  }
  set removed(on: boolean) {
    this.flags = on ? this.flags | REMOVED : this.flags & ~REMOVED;
  }

  constructor(
    readonly id: string,
    /** Creation order within the store: the ranking's final tie-break. */
    readonly seq: number,
  ) {}

  /** The window's end: the most recent start, or before any start the most recent event. */
  get anchorTs(): number {
    return this.startTs !== NONE ? this.startTs : this.latestTs;
  }

  /** First second of the current window (never before `floor`). */
  windowFirst(): number {
    return Math.max(windowStart(secondOf(this.anchorTs)), this.floor);
  }

  inWindow(second: number): boolean {
    return second >= this.windowFirst() && second <= secondOf(this.anchorTs);
  }

  /**
   * After the anchor changed: moves the floor up to where the new anchor needs it and recounts
   * the window's new sessions.
   */
  reanchor(): void {
    const first = windowStart(secondOf(this.anchorTs));
    const floor = this.startTs !== NONE ? first : first - FIRST_START_GRACE_S;
    if (floor > this.floor) this.floor = floor;
    this.windowNew = this.detail.total(this.windowFirst(), secondOf(this.anchorTs), F.starts);
  }

  windowStats(): WindowStats {
    return this.detail.sum(this.windowFirst(), secondOf(this.anchorTs));
  }

  /**
   * Whether a mark (or detail) at `second` can still matter: it is at or after the floor (in the
   * window or ahead of it), or inside the owner summary of a batch received at `receivedSecond`.
   */
  isLive(second: number, receivedSecond: number): boolean {
    return second >= this.floor || second > receivedSecond - WINDOW_S;
  }

  sessionTable(): MarkTable {
    return (this.sessions ??= new MarkTable(4));
  }

  errorTable(): MarkTable {
    return (this.errorMarks ??= new MarkTable(2));
  }

  qoeSeries(): BucketSeries {
    return (this.qoe ??= new BucketSeries(QOE_STRIDE));
  }

  /** Drops detail, history and marks no query can show any more; returns what was removed. */
  prune(receivedSecond: number, historyFirstMinute: number): { buckets: number; sessions: number } {
    let buckets = this.detail.dropBefore(this.floor) + this.history.dropBefore(historyFirstMinute);
    if (this.qoe !== null) {
      buckets += this.qoe.dropBefore(historyFirstMinute);
      if (this.qoe.length === 0) this.qoe = null;
    }
    const live = (second: number) => this.isLive(second, receivedSecond);
    let sessions = 0;
    if (this.sessions !== null) {
      sessions += this.sessions.prune(live);
      if (this.sessions.size === 0) this.sessions = null;
    }
    if (this.errorMarks !== null) {
      sessions += this.errorMarks.prune(live);
      if (this.errorMarks.size === 0) this.errorMarks = null;
    }
    return { buckets, sessions };
  }

  /** Detail, history and playback-quality buckets held. */
  bucketCount(): number {
    return this.detail.length + this.history.length + (this.qoe?.length ?? 0);
  }

  /** Dedupe entries held (sessions, and session/error-code pairs). */
  markCount(): number {
    return (this.sessions?.size ?? 0) + (this.errorMarks?.size ?? 0);
  }
}

/** Re-rank once this many assets wait (the store also re-ranks every 250 ms while events arrive). */
const RANKING_BACKLOG = 4096;
/** A read re-ranks a backlog up to this size first; past it, it merges the backlog in instead. */
const READ_FLUSH_LIMIT = 512;

/** The current (not the indexed) ranking key of `a` comes before the indexed key of `b`. */
const currentBefore = (a: AssetState, b: AssetState): boolean => {
  const ts = a.anchorTs;
  return a.windowNew !== b.rankNew ? a.windowNew > b.rankNew : ts !== b.rankTs ? ts > b.rankTs : a.seq < b.seq;
};

const byCurrentKey = (a: AssetState, b: AssetState): number => b.windowNew - a.windowNew || b.anchorTs - a.anchorTs || a.seq - b.seq;

/** One workspace: its assets, their ranking, per-second totals for the summary, per-minute history. */
export class OwnerState {
  readonly assets = new Map<string, AssetState>();
  readonly rank = new RankedAssets<AssetState>();
  /** Assets whose ranking key may have changed since the last read. */
  dirty: AssetState[] = [];
  /** Workspace totals per second, for the seconds an owner summary may still read. */
  detail = new BucketSeries();
  /** Workspace totals per minute over the serving window (history). */
  history = new BucketSeries();
  /** Workspace playback quality per minute, once reported. */
  qoe: BucketSeries | null = null;
  /** Dedupe marks of workspace-only events (refusals outside the library), once any counted. */
  marks: WorkspaceMarks | null = null;
  /**
   * No asset of this workspace expires before this time (Unix ms): the asset cap counts live
   * assets without scanning them all while it has not passed.
   */
  noExpiryBefore = 0;

  constructor(readonly id: string) {}

  qoeSeries(): BucketSeries {
    return (this.qoe ??= new BucketSeries(QOE_STRIDE));
  }

  workspaceMarks(): WorkspaceMarks {
    return (this.marks ??= new WorkspaceMarks());
  }

  /** Detail, history and playback-quality buckets held. */
  bucketCount(): number {
    return this.detail.length + this.history.length + (this.qoe?.length ?? 0);
  }

  /** Notes that the asset's ranking key changed; true if it is the first of a new backlog. */
  markDirty(asset: AssetState): boolean {
    if (asset.dirty) return false;
    asset.dirty = true;
    this.dirty.push(asset);
    if (this.dirty.length >= RANKING_BACKLOG) this.flushRanking();
    return this.dirty.length === 1;
  }

  /**
   * Up to `limit` assets in ranking order, among those `visible`. A short backlog is re-ranked
   * first; a long one (a burst of ingest) is sorted on its own and merged in, so a read never
   * pays for thousands of re-insertions.
   */
  topAssets(limit: number, visible: (asset: AssetState) => boolean): AssetState[] {
    const out: AssetState[] = [];
    if (limit <= 0) return out;
    if (this.dirty.length <= READ_FLUSH_LIMIT) {
      this.flushRanking();
      for (const asset of this.rank) {
        if (!visible(asset)) continue;
        out.push(asset);
        if (out.length >= limit) break;
      }
      return out;
    }
    const changed = this.dirty.filter((a) => !a.removed && visible(a)).sort(byCurrentKey);
    let next = 0;
    for (const asset of this.rank) {
      if (asset.dirty || !visible(asset)) continue;
      while (next < changed.length && out.length < limit && currentBefore(changed[next] as AssetState, asset)) out.push(changed[next++] as AssetState);
      if (out.length >= limit) return out;
      out.push(asset);
      if (out.length >= limit) return out;
    }
    while (next < changed.length && out.length < limit) out.push(changed[next++] as AssetState);
    return out;
  }

  /** Re-indexes the assets whose key changed, so the ranking is exact for a read. */
  flushRanking(): void {
    for (const asset of this.dirty) {
      asset.dirty = false;
      if (asset.removed) continue;
      const ts = asset.anchorTs;
      if (asset.ranked) {
        if (asset.rankNew === asset.windowNew && asset.rankTs === ts) continue;
        this.rank.remove(asset);
      }
      asset.rankNew = asset.windowNew;
      asset.rankTs = ts;
      this.rank.insert(asset);
      asset.ranked = true;
    }
    this.dirty = [];
  }

  /** Ranks every asset from scratch with one sort (after loading a snapshot). */
  rankAll(): void {
    const all = [...this.assets.values()];
    for (const asset of all) {
      asset.rankNew = asset.windowNew;
      asset.rankTs = asset.anchorTs;
      asset.ranked = true;
      asset.dirty = false;
    }
    this.rank.rebuild(all);
    this.dirty = [];
  }

  removeAsset(asset: AssetState): void {
    this.assets.delete(asset.id);
    if (asset.ranked) this.rank.remove(asset);
    asset.ranked = false;
    asset.removed = true;
  }
}
