import type { Clock } from '../../../platform/clock.js';
import { AssetState, NONE, OwnerState, sessionCount } from './asset-state.js';
import type { PlaybackEvent } from '../events.schema.js';
import { sumWindow } from './minute-bucket.js';
import type { MinuteBucket } from './minute-bucket.js';
import type { AssetStats, OwnerSummary, PruneResult, StatsStore, StoreSize } from './stats-store.js';
import { restoreSnapshot, snapshotLines } from './store-snapshot.js';
import { LATE_MINUTES, RETENTION_MS, WINDOW_MINUTES, minuteOf } from '../stats-window.js';

const RANK_EVERY_MS = 250;

export interface MemoryStatsStoreOptions {
  clock: Clock;
  /** stats_delay_ms: accepted events become visible this long after receipt (default 0). */
  delayMs?: number;
  /** How late an event may arrive and still anchor a window (default LATE_MINUTES, see stats-window.ts). */
  lateMinutes?: number;
}

interface PendingBatch {
  receivedAt: number;
  events: readonly PlaybackEvent[];
}

/** Floors derived from one batch's receipt time. */
interface Receipt {
  receivedAt: number;
  /** Events at or after this minute are timely: they may anchor a window. */
  timelyFloor: number;
  /** Buckets at or after this minute are open (see AssetState.isOpen). */
  openFloor: number;
  /** Workspace minute totals are kept from this minute on (a summary reads no older). */
  ownerFloor: number;
}

/**
 * The embedded statistics store (DESIGN §3.2). Everything visible is a function of the
 * batches recorded and their receipt times only (never of when prune ran), so replaying the
 * journal rebuilds exactly the same statistics. Dedupe scope: per (asset, session, kind) and
 * per (asset, session, error code), a session counts once in the minute it was first seen and
 * is remembered for as long as that minute's bucket can still be shown by a query (which
 * covers every 3-minute window it falls in); see README.md in this folder.
 */
export class MemoryStatsStore implements StatsStore {
  readonly owners = new Map<string, OwnerState>();
  private readonly clock: Clock;
  private readonly delayMs: number;
  private readonly lateMinutes: number;
  private pending: PendingBatch[] = [];
  private pendingEvents = 0;
  /** Receipt times only move forward, even if the system clock steps back. */
  lastReceivedAt = 0;
  private cachedOwner: OwnerState | undefined;
  private assetSeq = 0;
  /** Workspaces whose ranking has a backlog, re-ranked every RANK_EVERY_MS while events arrive. */
  private readonly unranked = new Set<OwnerState>();
  private rankedAt = 0;
  /** While frozen (a snapshot is being taken) nothing changes the state: no release, no prune. */
  private frozen = false;

  constructor(options: MemoryStatsStoreOptions) {
    this.clock = options.clock;
    this.delayMs = options.delayMs ?? 0;
    this.lateMinutes = options.lateMinutes ?? LATE_MINUTES;
  }

  record(events: readonly PlaybackEvent[], receivedAt: number): Promise<void> {
    this.recordSync(events, receivedAt);
    return Promise.resolve();
  }

  recordSync(events: readonly PlaybackEvent[], receivedAt: number): void {
    // A batch counted mid-snapshot would be in neither the snapshot nor (by seq) the replay after it.
    if (this.frozen) throw new Error('vod-stats store: record while a snapshot is being taken');
    if (events.length === 0) return;
    const at = Math.max(receivedAt, this.lastReceivedAt);
    this.lastReceivedAt = at;
    if (this.delayMs === 0) {
      this.applyBatch(events, at);
      return;
    }
    this.pending.push({ receivedAt: at, events });
    this.pendingEvents += events.length;
    this.releaseDue();
  }

  /** Batches received but not yet visible, for snapshots. */
  pendingBatches(): readonly PendingBatch[] {
    return this.pending;
  }

  /** Puts back a not-yet-visible batch from a snapshot (in order, before any new batch). */
  restorePending(receivedAt: number, events: readonly PlaybackEvent[]): void {
    this.pending.push({ receivedAt, events });
    this.pendingEvents += events.length;
  }

  /** Holds the state still for a snapshot; the caller also stops recording until `thaw`. */
  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
  }

  /** The state as snapshot lines (see store-snapshot.ts); freeze first if consumed across awaits. */
  snapshotLines(): Iterable<string> {
    return snapshotLines(this);
  }

  /** Loads a snapshot into this (empty) store. */
  restoreSnapshot(lines: Iterable<string>): void {
    restoreSnapshot(this, lines);
  }

  private releaseDue(): void {
    if (this.frozen) return;
    const now = this.clock.now();
    while (this.pending.length > 0 && (this.pending[0] as PendingBatch).receivedAt + this.delayMs <= now) {
      const batch = this.pending.shift() as PendingBatch;
      this.pendingEvents -= batch.events.length;
      this.applyBatch(batch.events, batch.receivedAt);
    }
  }

  private receipt(receivedAt: number): Receipt {
    const minute = minuteOf(receivedAt);
    return {
      receivedAt,
      timelyFloor: minute - this.lateMinutes,
      openFloor: minute - this.lateMinutes - (WINDOW_MINUTES - 1),
      ownerFloor: minute - (WINDOW_MINUTES - 1),
    };
  }

  private applyBatch(events: readonly PlaybackEvent[], receivedAt: number): void {
    const receipt = this.receipt(receivedAt);
    for (let i = 0; i < events.length; i++) this.apply(events[i] as PlaybackEvent, receipt);
    // Re-ranking in bulk now and then, not per batch: an asset changing many times in between
    // is re-inserted once. (Rank order depends only on the keys, so when this runs changes nothing visible.)
    const now = this.clock.now();
    if (this.unranked.size > 0 && now - this.rankedAt >= RANK_EVERY_MS) {
      for (const owner of this.unranked) owner.flushRanking();
      this.unranked.clear();
      this.rankedAt = now;
    }
  }

  /** Assets are numbered in creation order (snapshots keep that order, so ties rank the same after a restore). */
  nextAssetSeq(): number {
    return ++this.assetSeq;
  }

  ownerState(id: string): OwnerState {
    const cached = this.cachedOwner;
    if (cached !== undefined && cached.id === id) return cached;
    let owner = this.owners.get(id);
    if (owner === undefined) {
      owner = new OwnerState(id);
      this.owners.set(id, owner);
    }
    this.cachedOwner = owner;
    return owner;
  }

  private apply(e: PlaybackEvent, r: Receipt): void {
    const owner = this.ownerState(e.owner);
    let asset = owner.assets.get(e.asset_id);
    if (asset !== undefined && asset.anchorTs + RETENTION_MS < r.receivedAt) {
      owner.removeAsset(asset);
      asset = undefined;
    }
    const ts = e.ts;
    const minute = minuteOf(ts);
    const timely = minute >= r.timelyFloor;
    if (asset === undefined) {
      if (!timely) return;
      asset = new AssetState(e.asset_id, this.nextAssetSeq());
      owner.assets.set(e.asset_id, asset);
    }
    asset.cachedStats = undefined;
    if (timely) {
      let moved = false;
      if (e.type === 'start' && ts > asset.startTs) {
        asset.startTs = ts;
        moved = true;
      }
      if (ts > asset.latestTs) {
        asset.latestTs = ts;
        if (asset.startTs === NONE) moved = true;
      }
      if (moved) {
        asset.reanchor();
        if (owner.markDirty(asset)) this.unranked.add(owner);
      }
    }
    if (!asset.isOpen(minute, r.openFloor)) return;
    const total = minute >= r.ownerFloor ? owner.minute(minute) : undefined;
    switch (e.type) {
      case 'request':
        asset.bucket(minute).requests++;
        if (total !== undefined) total.requests++;
        return;
      case 'start': {
        const marks = asset.marks(e.session_id);
        if (marks.start !== NONE && asset.isOpen(marks.start, r.openFloor)) return;
        marks.start = minute;
        asset.bucket(minute).starts++;
        if (total !== undefined) total.starts++;
        if (asset.inWindow(minute)) {
          asset.windowNew++;
          if (owner.markDirty(asset)) this.unranked.add(owner);
        }
        return;
      }
      case 'manifest': {
        const marks = asset.marks(e.session_id);
        if (marks.manifest !== NONE && asset.isOpen(marks.manifest, r.openFloor)) return;
        marks.manifest = minute;
        const bucket = asset.bucket(minute);
        bucket.manifest++;
        if (total !== undefined) total.manifest++;
        if (e.latency_ms !== undefined) {
          bucket.addManifestLatency(e.latency_ms);
          if (total !== undefined) total.addManifestLatency(e.latency_ms);
        }
        return;
      }
      case 'ad': {
        const marks = asset.marks(e.session_id);
        if (marks.ad !== NONE && asset.isOpen(marks.ad, r.openFloor)) return;
        marks.ad = minute;
        const bucket = asset.bucket(minute);
        bucket.ad++;
        if (total !== undefined) total.ad++;
        if (e.latency_ms !== undefined) {
          bucket.addAdLatency(e.latency_ms);
          if (total !== undefined) total.addAdLatency(e.latency_ms);
        }
        return;
      }
      case 'error': {
        const code = e.error_code ?? 999;
        const marks = asset.marks(e.session_id);
        const errors = (marks.errors ??= []);
        let i = 0;
        while (i < errors.length && errors[i] !== code) i += 2;
        if (i < errors.length && asset.isOpen(errors[i + 1] as number, r.openFloor)) return;
        errors[i] = code;
        errors[i + 1] = minute;
        asset.bucket(minute).addError(code);
        if (total !== undefined) total.addError(code);
        return;
      }
    }
  }

  private visible(asset: AssetState, now: number): boolean {
    return asset.anchorTs !== NONE && asset.anchorTs + RETENTION_MS >= now;
  }

  private statsOf(owner: string, asset: AssetState): AssetStats {
    return (asset.cachedStats ??= { owner, assetId: asset.id, ts: asset.anchorTs, stats: asset.windowStats() });
  }

  getSync(owner: string, assetId: string): AssetStats | undefined {
    this.releaseDue();
    const asset = this.owners.get(owner)?.assets.get(assetId);
    if (asset === undefined || !this.visible(asset, this.clock.now())) return undefined;
    return this.statsOf(owner, asset);
  }

  get(owner: string, assetId: string): Promise<AssetStats | undefined> {
    return Promise.resolve(this.getSync(owner, assetId));
  }

  search(owner: string, assetIds: readonly string[]): Promise<AssetStats[]> {
    this.releaseDue();
    const state = this.owners.get(owner);
    const now = this.clock.now();
    const found: AssetStats[] = [];
    if (state !== undefined) {
      for (const id of assetIds) {
        const asset = state.assets.get(id);
        if (asset !== undefined && this.visible(asset, now)) found.push(this.statsOf(owner, asset));
      }
    }
    return Promise.resolve(found);
  }

  topSync(owner: string, limit: number): AssetStats[] {
    this.releaseDue();
    const state = this.owners.get(owner);
    const found: AssetStats[] = [];
    if (state === undefined) return found;
    const now = this.clock.now();
    for (const asset of state.topAssets(limit, (a) => this.visible(a, now))) found.push(this.statsOf(owner, asset));
    return found;
  }

  top(owner: string, limit: number): Promise<AssetStats[]> {
    return Promise.resolve(this.topSync(owner, limit));
  }

  summary(owner: string): Promise<OwnerSummary> {
    this.releaseDue();
    const now = this.clock.now();
    const last = minuteOf(now);
    const minutes: readonly MinuteBucket[] = this.owners.get(owner)?.minutes ?? [];
    const stats = sumWindow(minutes, last - WINDOW_MINUTES + 1, last);
    return Promise.resolve({ owner, ts: now, stats });
  }

  prune(): Promise<PruneResult> {
    if (this.frozen) return Promise.resolve({ assetsRemoved: 0, bucketsRemoved: 0, sessionsRemoved: 0 });
    this.releaseDue();
    // Pending batches carry receipt times >= now - delay: prune against that, never later.
    const ref = this.clock.now() - this.delayMs;
    const r = this.receipt(ref);
    const result: PruneResult = { assetsRemoved: 0, bucketsRemoved: 0, sessionsRemoved: 0 };
    for (const [id, owner] of this.owners) {
      for (const asset of owner.assets.values()) {
        if (asset.anchorTs + RETENTION_MS < ref) {
          owner.removeAsset(asset);
          result.assetsRemoved++;
          result.bucketsRemoved += asset.buckets.length;
          result.sessionsRemoved += sessionCount(asset.sessions);
          continue;
        }
        const removed = asset.prune(r.openFloor);
        result.bucketsRemoved += removed.buckets;
        result.sessionsRemoved += removed.sessions;
      }
      owner.minutes = owner.minutes.filter((b) => b.minute >= r.ownerFloor);
      if (owner.assets.size === 0 && owner.minutes.length === 0) {
        this.owners.delete(id);
        this.unranked.delete(owner);
        if (this.cachedOwner === owner) this.cachedOwner = undefined;
      } else if (owner.dirty.length > 0) {
        owner.flushRanking();
      }
    }
    return Promise.resolve(result);
  }

  sizeSync(): StoreSize {
    const size: StoreSize = { owners: 0, assets: 0, buckets: 0, sessions: 0, ownerBuckets: 0, pendingEvents: 0 };
    size.pendingEvents = this.pendingEvents;
    for (const owner of this.owners.values()) {
      size.owners++;
      size.ownerBuckets += owner.minutes.length;
      for (const asset of owner.assets.values()) {
        size.assets++;
        size.buckets += asset.buckets.length;
        size.sessions += sessionCount(asset.sessions);
      }
    }
    return size;
  }

  size(): Promise<StoreSize> {
    return Promise.resolve(this.sizeSync());
  }
}
