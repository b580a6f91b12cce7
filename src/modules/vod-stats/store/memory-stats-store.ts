import type { Clock } from '../../../platform/clock.js';
import { AssetState, MARK, NONE, OwnerState } from './asset-state.js';
import { AD_LATENCY, F, MANIFEST_LATENCY, Q, emptyWindow } from './bucket-series.js';
import { historyPoints } from './history.js';
import type { PlaybackEvent } from '../events.schema.js';
import { errorKey } from './session-marks.js';
import { EventColumns, TYPE, type IdTable } from '../event-columns.js';
import type { AssetStats, HistoryPoint, OwnerSummary, PruneResult, RecordResult, StatsStore, StoreSize } from './stats-store.js';
import { restoreSnapshot, snapshotLines } from './store-snapshot.js';
import { DEFAULT_MAX_ASSETS_PER_WORKSPACE, RETENTION_MS, minuteOf, secondOf, windowStart } from '../stats-window.js';

const RANK_EVERY_MS = 250;

export interface MemoryStatsStoreOptions {
  clock: Clock;
  /** stats_delay_ms: accepted events become visible this long after receipt (default 0). */
  delayMs?: number;
  /** Distinct assets one workspace may hold; events for more are dropped and counted (default 100,000). */
  maxAssetsPerWorkspace?: number;
}

/** Rows [from, to) of `events`, received at `receivedAt`, not visible yet (stats_delay_ms). */
interface PendingBatch {
  receivedAt: number;
  events: EventColumns;
  from: number;
  to: number;
}

/** What one batch's receipt time decides. */
interface Receipt {
  receivedAt: number;
  /** The second of the receipt: an owner summary of it reads from WINDOW_S seconds before. */
  second: number;
  /** Workspace seconds from this one on may still be read by a summary. */
  summaryFirst: number;
}

/**
 * The embedded statistics store (DESIGN §3.2). Windows are exact to the second: an asset's is
 * the WINDOW_S seconds ending with the second of its most recent start, the owner summary's the
 * WINDOW_S seconds ending with the query's. Events up to 24 h old count where they belong (a
 * window, the history, or both). Everything visible is a function of the batches recorded and
 * their receipt times only (never of when prune ran), so replaying the journal rebuilds exactly
 * the same statistics. Dedupe: per (asset, session, kind) and per (asset, session, error code),
 * a session counts once, at the second it was first seen, and is remembered while that second
 * can still be shown (see AssetState.isLive and README.md in this folder).
 */
export class MemoryStatsStore implements StatsStore, IdTable {
  readonly owners = new Map<string, OwnerState>();
  private readonly clock: Clock;
  private readonly delayMs: number;
  private readonly maxAssets: number;
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
  /** Events for a new asset of a workspace already holding the maximum, dropped (for metrics). */
  droppedEvents = 0;
  /** Workspaces erased while frozen: erased at `thaw`, so a snapshot being copied never sees a half-erased state. */
  private readonly erasures = new Set<string>();

  constructor(options: MemoryStatsStoreOptions) {
    this.clock = options.clock;
    this.delayMs = options.delayMs ?? 0;
    this.maxAssets = options.maxAssetsPerWorkspace ?? DEFAULT_MAX_ASSETS_PER_WORKSPACE;
  }

  record(events: readonly PlaybackEvent[], receivedAt: number): Promise<RecordResult> {
    return Promise.resolve(this.recordSync(events, receivedAt));
  }

  /**
   * Counts a batch. Without a delay the answer lists the events that were dropped (positions in
   * `events`: a new asset past the workspace's asset limit); with a delay they are counted when
   * the batch becomes visible, and drops then only show in `droppedEvents`.
   */
  recordSync(events: readonly PlaybackEvent[], receivedAt: number): RecordResult {
    return this.recordColumns(EventColumns.fromEvents(events, this), receivedAt);
  }

  /** The workspace id as this store keeps it (IdTable: batches in flight hold these copies). */
  ownerId(owner: string): string {
    return this.owners.get(owner)?.id ?? owner;
  }

  /** The asset id as this store keeps it, when it holds the asset (IdTable). */
  assetId(owner: string, assetId: string): string {
    const cached = this.cachedOwner;
    const state = cached !== undefined && cached.id === owner ? cached : this.owners.get(owner);
    return state?.assets.get(assetId)?.id ?? assetId;
  }

  /**
   * Counts rows [from, to) of a batch held in columns (what the embedded ingest parses into):
   * the same as recordSync of those events. Dropped positions are positions in `events`.
   */
  recordColumns(events: EventColumns, receivedAt: number, from = 0, to = events.length): RecordResult {
    // A batch counted mid-snapshot would be in neither the snapshot nor (by seq) the replay after it.
    if (this.frozen) throw new Error('vod-stats store: record while a snapshot is being taken');
    if (to <= from) return NOTHING_DROPPED;
    const at = Math.max(receivedAt, this.lastReceivedAt);
    this.lastReceivedAt = at;
    if (this.delayMs === 0) return this.applyBatch(events, from, to, at);
    this.restorePending(at, events, from, to);
    this.releaseDue();
    return NOTHING_DROPPED;
  }

  /** Batches received but not yet visible, for snapshots. */
  pendingBatches(): readonly PendingBatch[] {
    return this.pending;
  }

  /** Puts back a not-yet-visible batch from a snapshot (in order, before any new batch). */
  restorePending(receivedAt: number, events: EventColumns, from = 0, to = events.length): void {
    this.pending.push({ receivedAt, events, from, to });
    this.pendingEvents += to - from;
  }

  /** Holds the state still for a snapshot; the caller also stops recording until `thaw`. */
  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
    for (const owner of this.erasures) this.eraseNow(owner);
    this.erasures.clear();
  }

  eraseOwner(owner: string): Promise<void> {
    if (this.frozen) this.erasures.add(owner);
    else this.eraseNow(owner);
    return Promise.resolve();
  }

  private eraseNow(owner: string): void {
    const state = this.owners.get(owner);
    if (state !== undefined) {
      this.owners.delete(owner);
      this.unranked.delete(state);
      if (this.cachedOwner === state) this.cachedOwner = undefined;
    }
    if (this.pending.some((b) => b.events.owners.includes(owner))) {
      this.pending = this.pending.map((b) => {
        const events = b.events.without(owner, b.from, b.to);
        return { receivedAt: b.receivedAt, events, from: 0, to: events.length };
      });
      this.pendingEvents = this.pending.reduce((n, b) => n + b.to - b.from, 0);
    }
  }

  ownerIds(): Promise<string[]> {
    return Promise.resolve([...this.owners.keys()]);
  }

  /** The state as snapshot lines (see store-snapshot.ts); freeze first if consumed across awaits. */
  snapshotLines(): Iterable<string> {
    return snapshotLines(this);
  }

  /** Loads a snapshot into this (empty) store. */
  restoreSnapshot(lines: Iterable<string>): void {
    restoreSnapshot(this, lines);
  }

  /** Reads snapshot lines as restoreSnapshot does, keeping no asset (the read-back check); the number of assets read. */
  checkSnapshot(lines: Iterable<string>): number {
    return restoreSnapshot(this, lines, { retain: false });
  }

  private releaseDue(): void {
    if (this.frozen) return;
    const now = this.clock.now();
    while (this.pending.length > 0 && (this.pending[0] as PendingBatch).receivedAt + this.delayMs <= now) {
      const batch = this.pending.shift() as PendingBatch;
      this.pendingEvents -= batch.to - batch.from;
      this.applyBatch(batch.events, batch.from, batch.to, batch.receivedAt);
    }
  }

  private applyBatch(events: EventColumns, from: number, to: number, receivedAt: number): RecordResult {
    const second = secondOf(receivedAt);
    const receipt: Receipt = { receivedAt, second, summaryFirst: windowStart(second) };
    let dropped: number[] | undefined;
    for (let i = from; i < to; i++) {
      if (!this.apply(events, i, receipt)) (dropped ??= []).push(i);
    }
    // Re-ranking in bulk now and then, not per batch: an asset changing many times in between
    // is re-inserted once. (Rank order depends only on the keys, so when this runs changes nothing visible.)
    const now = this.clock.now();
    if (this.unranked.size > 0 && now - this.rankedAt >= RANK_EVERY_MS) {
      for (const owner of this.unranked) owner.flushRanking();
      this.unranked.clear();
      this.rankedAt = now;
    }
    if (dropped === undefined) return NOTHING_DROPPED;
    this.droppedEvents += dropped.length;
    return { dropped };
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

  /**
   * Whether `owner` may take one more asset at `receivedAt`. Expired assets do not count: once
   * at the limit, they are removed (as prune would), and the earliest expiry of the others is
   * remembered so a flood of events for new assets does not scan the workspace again and again.
   */
  private roomFor(owner: OwnerState, receivedAt: number): boolean {
    if (owner.assets.size < this.maxAssets) return true;
    if (receivedAt <= owner.noExpiryBefore) return false;
    let earliest = Infinity;
    for (const asset of owner.assets.values()) {
      const expiresAt = asset.anchorTs + RETENTION_MS;
      if (expiresAt < receivedAt) owner.removeAsset(asset);
      else if (expiresAt < earliest) earliest = expiresAt;
    }
    owner.noExpiryBefore = earliest;
    return owner.assets.size < this.maxAssets;
  }

  /**
   * Counts an event that never touches an asset's window: `workspace_only` events (workspace
   * summary and history, no dedupe: there are no marks at the workspace level), and `rebuffer`
   * reports (playback quality history of the asset if it is held, and of the workspace).
   */
  private applyOutsideAssets(c: EventColumns, i: number, type: number, owner: OwnerState, r: Receipt): void {
    const ts = c.ts[i] as number;
    const minute = minuteOf(ts);
    if (type === TYPE.rebuffer) {
      const asset = owner.assets.get(c.asset[i] as string);
      if (asset !== undefined && asset.anchorTs + RETENTION_MS >= r.receivedAt) asset.qoeSeries().add(minute, Q.rebuffers);
      owner.qoeSeries().add(minute, Q.rebuffers);
      return;
    }
    const second = secondOf(ts);
    const summarised = second >= r.summaryFirst;
    if (type === TYPE.error) {
      const code = c.code[i] as number;
      owner.history.addError(minute, code);
      if (summarised) owner.detail.addError(second, code);
      return;
    }
    const field = FIELD_OF[type] as number;
    owner.history.add(minute, field);
    if (summarised) owner.detail.add(second, field);
    const latency = c.value[i] as number;
    if (!Number.isNaN(latency) && (type === TYPE.manifest || type === TYPE.ad)) {
      const base = type === TYPE.manifest ? MANIFEST_LATENCY : AD_LATENCY;
      owner.history.addLatency(minute, base, latency);
      if (summarised) owner.detail.addLatency(second, base, latency);
    }
  }

  /** Counts event `i` of `c`; false when it was dropped (a new asset past the workspace's limit). */
  private apply(c: EventColumns, i: number, r: Receipt): boolean {
    const owner = this.ownerState(c.owner[i] as string);
    const type = c.type[i] as number;
    if (type === TYPE.rebuffer || c.workspaceOnly(i)) {
      this.applyOutsideAssets(c, i, type, owner, r);
      return true;
    }
    const assetId = c.asset[i] as string;
    let asset = owner.assets.get(assetId);
    if (asset !== undefined && asset.anchorTs + RETENTION_MS < r.receivedAt) {
      owner.removeAsset(asset);
      asset = undefined;
    }
    if (asset === undefined) {
      if (!this.roomFor(owner, r.receivedAt)) return false;
      asset = new AssetState(assetId, this.nextAssetSeq());
      owner.assets.set(assetId, asset);
    }
    asset.cachedStats = undefined;
    const ts = c.ts[i] as number;
    let moved = false;
    if (type === TYPE.start && ts > asset.startTs) {
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

    const second = secondOf(ts);
    const minute = minuteOf(ts);
    const detailed = second >= asset.floor;
    const summarised = second >= r.summaryFirst;
    if (type === TYPE.request) {
      asset.history.add(minute, F.requests);
      owner.history.add(minute, F.requests);
      if (detailed) asset.detail.add(second, F.requests);
      if (summarised) owner.detail.add(second, F.requests);
      return true;
    }
    const live = asset.isLive(second, r.second);
    if (type === TYPE.error) {
      const code = c.code[i] as number;
      if (live) {
        const marks = asset.errorTable();
        const at = marks.ensure(errorKey(c.session[i] as number, code));
        const seen = marks.second(at, 1);
        if (seen !== NONE && asset.isLive(seen, r.second)) return true;
        marks.setSecond(at, 1, second);
      }
      asset.history.addError(minute, code);
      owner.history.addError(minute, code);
      if (detailed) asset.detail.addError(second, code);
      if (summarised) owner.detail.addError(second, code);
      return true;
    }
    const kind = type === TYPE.start ? MARK.start : type === TYPE.manifest ? MARK.manifest : MARK.ad;
    if (live) {
      const marks = asset.sessionTable();
      const at = marks.ensure(c.session[i] as number);
      const seen = marks.second(at, kind);
      if (seen !== NONE && asset.isLive(seen, r.second)) return true;
      marks.setSecond(at, kind, second);
    }
    const field = kind === MARK.start ? F.starts : kind === MARK.manifest ? F.manifest : F.ad;
    asset.history.add(minute, field);
    owner.history.add(minute, field);
    if (detailed) asset.detail.add(second, field);
    if (summarised) owner.detail.add(second, field);
    const value = c.value[i] as number;
    if (kind !== MARK.start) {
      if (!Number.isNaN(value)) {
        const base = kind === MARK.manifest ? MANIFEST_LATENCY : AD_LATENCY;
        asset.history.addLatency(minute, base, value);
        owner.history.addLatency(minute, base, value);
        if (detailed) asset.detail.addLatency(second, base, value);
        if (summarised) owner.detail.addLatency(second, base, value);
      }
      return true;
    }
    if (!Number.isNaN(value)) {
      asset.qoeSeries().addStartup(minute, value);
      owner.qoeSeries().addStartup(minute, value);
    }
    if (asset.inWindow(second)) {
      asset.windowNew++;
      if (owner.markDirty(asset)) this.unranked.add(owner);
    }
    return true;
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

  history(owner: string, assetId: string | undefined, from: number, to: number): Promise<HistoryPoint[] | undefined> {
    this.releaseDue();
    const now = this.clock.now();
    const state = this.owners.get(owner);
    const first = minuteOf(Math.max(from, now - RETENTION_MS));
    const last = minuteOf(Math.min(to, now));
    if (assetId === undefined) return Promise.resolve(state === undefined ? [] : historyPoints(state.history, state.qoe, first, last));
    const asset = state?.assets.get(assetId);
    if (asset === undefined || !this.visible(asset, now)) return Promise.resolve(undefined);
    return Promise.resolve(historyPoints(asset.history, asset.qoe, first, last));
  }

  summary(owner: string): Promise<OwnerSummary> {
    this.releaseDue();
    const now = this.clock.now();
    const last = secondOf(now);
    const state = this.owners.get(owner);
    const stats = state === undefined ? emptyWindow() : state.detail.sum(windowStart(last), last);
    return Promise.resolve({ owner, ts: now, stats });
  }

  prune(): Promise<PruneResult> {
    if (this.frozen) return Promise.resolve({ assetsRemoved: 0, bucketsRemoved: 0, sessionsRemoved: 0 });
    this.releaseDue();
    // Pending batches carry receipt times >= now - delay: prune against that, never later.
    const ref = this.clock.now() - this.delayMs;
    const second = secondOf(ref);
    const historyFirst = minuteOf(ref - RETENTION_MS);
    const result: PruneResult = { assetsRemoved: 0, bucketsRemoved: 0, sessionsRemoved: 0 };
    for (const [id, owner] of this.owners) {
      for (const asset of owner.assets.values()) {
        if (asset.anchorTs + RETENTION_MS < ref) {
          owner.removeAsset(asset);
          result.assetsRemoved++;
          result.bucketsRemoved += asset.bucketCount();
          result.sessionsRemoved += asset.markCount();
          continue;
        }
        const removed = asset.prune(second, historyFirst);
        result.bucketsRemoved += removed.buckets;
        result.sessionsRemoved += removed.sessions;
      }
      owner.detail.dropBefore(windowStart(second));
      owner.history.dropBefore(historyFirst);
      if (owner.qoe !== null) {
        owner.qoe.dropBefore(historyFirst);
        if (owner.qoe.length === 0) owner.qoe = null;
      }
      if (owner.assets.size === 0 && owner.bucketCount() === 0) {
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
    const size: StoreSize = { owners: 0, assets: 0, buckets: 0, sessions: 0, ownerBuckets: 0, pendingEvents: this.pendingEvents };
    for (const owner of this.owners.values()) {
      size.owners++;
      size.ownerBuckets += owner.bucketCount();
      for (const asset of owner.assets.values()) {
        size.assets++;
        size.buckets += asset.bucketCount();
        size.sessions += asset.markCount();
      }
    }
    return size;
  }

  size(): Promise<StoreSize> {
    return Promise.resolve(this.sizeSync());
  }
}

/** The window field of each type counted as a plain field (by TYPE). */
const FIELD_OF: readonly number[] = [F.requests, F.manifest, F.ad, F.starts];

const NOTHING_DROPPED: RecordResult = Object.freeze({ dropped: [] as number[] });
