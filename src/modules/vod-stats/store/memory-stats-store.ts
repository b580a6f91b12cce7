import type { Clock } from '../../../platform/clock.js';
import type { AssetState } from './asset-state.js';
import { NONE, OwnerState } from './asset-state.js';
import { emptyWindow } from './bucket-series.js';
import { EventCounter } from './event-counting.js';
import { historyPoints } from './history.js';
import type { PlaybackEvent } from '../events.schema.js';
import { EventColumns, type IdTable } from '../event-columns.js';
import { PendingBatches } from './pending-batches.js';
import { pruneOwners, storeSize } from './retention.js';
import type { AssetStats, HistoryPoint, OwnerSummary, PruneResult, RecordResult, StatsStore, StoreSize } from './stats-store.js';
import { restoreSnapshot, snapshotLines } from './store-snapshot.js';
import type { SnapshotTarget } from './store-snapshot.js';
import { DEFAULT_MAX_ASSETS_PER_WORKSPACE, RETENTION_MS, minuteOf, secondOf, summaryEnd, windowStart } from '../stats-window.js';

export interface MemoryStatsStoreOptions {
  clock: Clock;
  /** stats_delay_ms: accepted events become visible this long after receipt (default 0). */
  delayMs?: number;
  /** Distinct assets one workspace may hold; events for more are dropped and counted (default 100,000). */
  maxAssetsPerWorkspace?: number;
}

/**
 * The embedded statistics store (DESIGN §3.2). Windows are exact to the second: an asset's is
 * the WINDOW_S seconds ending with the second of its most recent start, the owner summary's the
 * WINDOW_S seconds ending with the query's (with stats_delay_ms: ending that long before the query). Events up to 24 h old count where they belong (a
 * window, the history, or both). Everything visible is a function of the batches recorded and
 * their receipt times only (never of when prune ran), so replaying the journal rebuilds exactly
 * the same statistics. Dedupe: per (asset, session, kind) and per (asset, session, error code),
 * a session counts once, at the second it was first seen, and is remembered while that second
 * can still be shown (see AssetState.isLive and README.md in this folder).
 */
export class MemoryStatsStore implements StatsStore, IdTable {
  readonly owners = new Map<string, OwnerState>();
  private readonly clock: Clock;
  private readonly pending: PendingBatches;
  private readonly counter: EventCounter;
  /** Receipt times only move forward, even if the system clock steps back. */
  private lastReceivedAt = 0;
  private cachedOwner: OwnerState | undefined;
  private assetSeq = 0;
  /** While frozen (a snapshot is being taken) nothing changes the state: no release, no prune. */
  private frozen = false;
  /** Events for a new asset of a workspace already holding the maximum, dropped (for metrics). */
  droppedEvents = 0;
  /** Workspaces erased while frozen: erased at `thaw`, so a snapshot being copied never sees a half-erased state. */
  private readonly erasures = new Set<string>();

  constructor(options: MemoryStatsStoreOptions) {
    this.clock = options.clock;
    this.pending = new PendingBatches(options.delayMs ?? 0);
    // Arrows, so the counter and the snapshot codec reach these without them being public.
    this.counter = new EventCounter(
      { ownerState: (id) => this.ownerState(id), nextAssetSeq: () => this.nextAssetSeq() },
      options.clock,
      options.maxAssetsPerWorkspace ?? DEFAULT_MAX_ASSETS_PER_WORKSPACE,
    );
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
    if (this.pending.delayMs === 0) return this.countBatch(events, from, to, at);
    this.pending.add(at, events, from, to);
    this.releaseDue();
    return NOTHING_DROPPED;
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
    if (state !== undefined) this.dropOwner(owner, state);
    this.pending.eraseOwner(owner);
  }

  /** Forgets a workspace (erased, or pruned down to nothing). */
  private dropOwner(id: string, state: OwnerState): void {
    this.owners.delete(id);
    this.counter.forget(state);
    if (this.cachedOwner === state) this.cachedOwner = undefined;
  }

  ownerIds(): Promise<string[]> {
    return Promise.resolve([...this.owners.keys()]);
  }

  /** The state as snapshot lines (see store-snapshot.ts); freeze first if consumed across awaits. */
  snapshotLines(): Iterable<string> {
    return snapshotLines({
      lastReceivedAt: () => this.lastReceivedAt,
      owners: () => this.owners.values(),
      pendingBatches: () => this.pending.list(),
    });
  }

  /** Loads a snapshot into this (empty) store. */
  restoreSnapshot(lines: Iterable<string>): void {
    restoreSnapshot(this.snapshotTarget(), lines);
  }

  /** Reads snapshot lines as restoreSnapshot does, keeping no asset (the read-back check); the number of assets read. */
  checkSnapshot(lines: Iterable<string>): number {
    return restoreSnapshot(this.snapshotTarget(), lines, { retain: false });
  }

  private snapshotTarget(): SnapshotTarget {
    return {
      setLastReceivedAt: (at) => {
        this.lastReceivedAt = at;
      },
      ownerState: (id) => this.ownerState(id),
      nextAssetSeq: () => this.nextAssetSeq(),
      restorePending: (receivedAt, events) => this.pending.add(receivedAt, events),
    };
  }

  private releaseDue(): void {
    if (this.frozen) return;
    this.pending.releaseDue(this.clock.now(), (batch) => this.countBatch(batch.events, batch.from, batch.to, batch.receivedAt));
  }

  private countBatch(events: EventColumns, from: number, to: number, receivedAt: number): RecordResult {
    const dropped = this.counter.count(events, from, to, receivedAt);
    if (dropped === undefined) return NOTHING_DROPPED;
    this.droppedEvents += dropped.length;
    return { dropped };
  }

  /** Assets are numbered in creation order (snapshots keep that order, so ties rank the same after a restore). */
  private nextAssetSeq(): number {
    return ++this.assetSeq;
  }

  private ownerState(id: string): OwnerState {
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
    const ts = summaryEnd(this.clock.now(), this.pending.delayMs);
    const last = secondOf(ts);
    const state = this.owners.get(owner);
    const stats = state === undefined ? emptyWindow() : state.detail.sum(windowStart(last), last);
    return Promise.resolve({ owner, ts, stats });
  }

  prune(): Promise<PruneResult> {
    if (this.frozen) return Promise.resolve({ assetsRemoved: 0, bucketsRemoved: 0, sessionsRemoved: 0 });
    this.releaseDue();
    // Pending batches carry receipt times >= now - delay: prune against that, never later.
    const ref = this.clock.now() - this.pending.delayMs;
    return Promise.resolve(pruneOwners(this.owners, ref, (id, owner) => this.dropOwner(id, owner)));
  }

  sizeSync(): StoreSize {
    return storeSize(this.owners.values(), this.pending.eventCount);
  }

  size(): Promise<StoreSize> {
    return Promise.resolve(this.sizeSync());
  }
}

const NOTHING_DROPPED: RecordResult = Object.freeze({ dropped: [] as number[] });
