import { MinuteBucket, sumWindow } from './minute-bucket.js';
import { RankedAssets } from './ranked-assets.js';
import type { Rankable } from './ranked-assets.js';
import type { AssetStats, WindowStats } from './stats-store.js';
import { WINDOW_MINUTES, minuteOf } from '../stats-window.js';

/** "No minute / no time yet". Minutes and timestamps are never negative. */
export const NONE = -1;

/**
 * Dedupe entry of one playback session of one asset: the minute each kind was counted in
 * (NONE if not counted). `errors` is a flat [code, minute, code, minute, ...] list.
 */
export class SessionMarks {
  manifest = NONE;
  ad = NONE;
  start = NONE;
  errors: number[] | null = null;

  constructor(readonly id: string) {}
}

/** Up to this many sessions an asset keeps its marks in a small array (a Map costs ~200 bytes empty). */
const SMALL_SESSIONS = 8;

/** The dedupe marks of one asset: a small array for the few sessions most assets have, else a Map. */
export type SessionTable = SessionMarks[] | Map<string, SessionMarks>;

export const sessionCount = (table: SessionTable | null): number =>
  table === null ? 0 : Array.isArray(table) ? table.length : table.size;

export const sessionList = (table: SessionTable | null): Iterable<SessionMarks> =>
  table === null ? [] : Array.isArray(table) ? table : table.values();

/** The statistics state of one asset of one workspace. */
export class AssetState implements Rankable {
  /** Most recent timely session start (Unix ms), NONE before the first. */
  startTs = NONE;
  /** Most recent timely event of any kind (Unix ms). */
  latestTs = NONE;
  /** Minute of the anchor (startTs, or latestTs before any start). */
  anchorMinute = NONE;
  /** Minute buckets in ascending minute order; a handful at most. */
  buckets: MinuteBucket[] = [];
  sessions: SessionTable | null = null;
  /** Distinct started sessions in the current window: the ranking key. */
  windowNew = 0;
  rankNew = 0;
  rankTs = 0;
  /** The last statistics read, until the asset changes: repeated reads share one object (and its rendering). */
  cachedStats: AssetStats | undefined = undefined;
  ranked = false;
  dirty = false;
  removed = false;

  constructor(
    readonly id: string,
    /** Creation order within the store: the ranking's final tie-break. */
    readonly seq: number,
  ) {}

  /** The window's end: the most recent start, or before any start the most recent event. */
  get anchorTs(): number {
    return this.startTs !== NONE ? this.startTs : this.latestTs;
  }

  /**
   * Whether a bucket of `minute` can still be shown by some query: inside the current window,
   * or recent enough (>= `openFloor`) that a later timely start or the summary may cover it.
   */
  isOpen(minute: number, openFloor: number): boolean {
    return minute >= openFloor || (minute <= this.anchorMinute && minute > this.anchorMinute - WINDOW_MINUTES);
  }

  bucket(minute: number): MinuteBucket {
    const buckets = this.buckets;
    let i = buckets.length - 1;
    while (i >= 0 && (buckets[i] as MinuteBucket).minute > minute) i--;
    if (i >= 0 && (buckets[i] as MinuteBucket).minute === minute) return buckets[i] as MinuteBucket;
    // Exact-size copies: a few buckets per asset, and push() would reserve 17 slots.
    const created = new MinuteBucket(minute);
    this.buckets = [...buckets.slice(0, i + 1), created, ...buckets.slice(i + 1)];
    return created;
  }

  marks(sessionId: string): SessionMarks {
    const sessions = this.sessions;
    if (sessions === null) {
      const marks = new SessionMarks(sessionId);
      this.sessions = [marks];
      return marks;
    }
    if (Array.isArray(sessions)) {
      for (let i = 0; i < sessions.length; i++) if ((sessions[i] as SessionMarks).id === sessionId) return sessions[i] as SessionMarks;
      const marks = new SessionMarks(sessionId);
      if (sessions.length < SMALL_SESSIONS) this.sessions = [...sessions, marks];
      else this.sessions = new Map([...sessions, marks].map((m) => [m.id, m]));
      return marks;
    }
    let marks = sessions.get(sessionId);
    if (marks === undefined) {
      marks = new SessionMarks(sessionId);
      sessions.set(sessionId, marks);
    }
    return marks;
  }

  /** Re-derives the anchor minute and the window's new-session count; true if the minute moved. */
  reanchor(): boolean {
    const minute = minuteOf(this.anchorTs);
    if (minute === this.anchorMinute) return false;
    this.anchorMinute = minute;
    let starts = 0;
    for (const b of this.buckets) if (b.minute <= minute && b.minute > minute - WINDOW_MINUTES) starts += b.starts;
    this.windowNew = starts;
    return true;
  }

  inWindow(minute: number): boolean {
    return minute <= this.anchorMinute && minute > this.anchorMinute - WINDOW_MINUTES;
  }

  windowStats(): WindowStats {
    return sumWindow(this.buckets, this.anchorMinute - WINDOW_MINUTES + 1, this.anchorMinute);
  }

  /** Drops buckets and dedupe marks no query can show any more; returns what was removed. */
  prune(openFloor: number): { buckets: number; sessions: number } {
    const before = this.buckets.length;
    this.buckets = this.buckets.filter((b) => this.isOpen(b.minute, openFloor));
    const sessionsBefore = sessionCount(this.sessions);
    if (this.sessions !== null) {
      const live = (minute: number): number => (minute !== NONE && this.isOpen(minute, openFloor) ? minute : NONE);
      const kept: SessionMarks[] = [];
      for (const marks of sessionList(this.sessions)) {
        marks.manifest = live(marks.manifest);
        marks.ad = live(marks.ad);
        marks.start = live(marks.start);
        if (marks.errors !== null) {
          const kept: number[] = [];
          for (let i = 0; i + 1 < marks.errors.length; i += 2) {
            const minute = marks.errors[i + 1] as number;
            if (this.isOpen(minute, openFloor)) kept.push(marks.errors[i] as number, minute);
          }
          marks.errors = kept.length > 0 ? kept : null;
        }
        if (marks.manifest !== NONE || marks.ad !== NONE || marks.start !== NONE || marks.errors !== null) kept.push(marks);
      }
      if (kept.length === 0) this.sessions = null;
      else if (kept.length <= SMALL_SESSIONS) this.sessions = kept.length === sessionsBefore && Array.isArray(this.sessions) ? this.sessions : [...kept];
      else if (kept.length < sessionsBefore) this.sessions = new Map(kept.map((m) => [m.id, m]));
    }
    return { buckets: before - this.buckets.length, sessions: sessionsBefore - sessionCount(this.sessions) };
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

/** One workspace: its assets, their ranking, and per-minute totals for the summary. */
export class OwnerState {
  readonly assets = new Map<string, AssetState>();
  readonly rank = new RankedAssets<AssetState>();
  /** Assets whose ranking key may have changed since the last read. */
  dirty: AssetState[] = [];
  /** Workspace totals per minute (ascending), only for minutes a summary may still read. */
  minutes: MinuteBucket[] = [];

  constructor(readonly id: string) {}

  minute(minute: number): MinuteBucket {
    const list = this.minutes;
    for (let i = list.length - 1; i >= 0; i--) {
      const b = list[i] as MinuteBucket;
      if (b.minute === minute) return b;
      if (b.minute < minute) {
        const created = new MinuteBucket(minute);
        list.splice(i + 1, 0, created);
        return created;
      }
    }
    const created = new MinuteBucket(minute);
    list.unshift(created);
    return created;
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
