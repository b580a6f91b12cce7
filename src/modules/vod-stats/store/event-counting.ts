import type { Clock } from '../../../platform/clock.js';
import { AssetState, MARK, NONE } from './asset-state.js';
import type { OwnerState } from './asset-state.js';
import { AD_LATENCY, F, MANIFEST_LATENCY, Q } from './bucket-series.js';
import { errorKey } from './session-marks.js';
import { WorkspaceMarks } from './workspace-marks.js';
import { TYPE } from '../event-columns.js';
import type { EventColumns } from '../event-columns.js';
import { RETENTION_MS, minuteOf, secondOf, windowStart } from '../stats-window.js';

const RANK_EVERY_MS = 250;

/** Where counting finds the state of a workspace: the store's. */
export interface CountingScope {
  /** The workspace's state, made if it is new. */
  ownerState(id: string): OwnerState;
  /** The creation number of a new asset (snapshots keep that order, so ties rank the same after a restore). */
  nextAssetSeq(): number;
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
 * Counts the visible batches of the embedded store into its workspace and asset states: the
 * counting rules of DESIGN §3.2 (which window, history or summary an event lands in, session
 * dedupe, the asset limit), and the cadence at which the rankings catch up with what changed.
 */
export class EventCounter {
  /** Workspaces whose ranking has a backlog, re-ranked every RANK_EVERY_MS while events arrive. */
  private readonly unranked = new Set<OwnerState>();
  private rankedAt = 0;

  constructor(
    private readonly scope: CountingScope,
    private readonly clock: Clock,
    /** Distinct assets one workspace may hold. */
    private readonly maxAssets: number,
  ) {}

  /** Counts rows [from, to) of a batch received at `receivedAt`; the rows dropped (positions in `events`), if any. */
  count(events: EventColumns, from: number, to: number, receivedAt: number): number[] | undefined {
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
    return dropped;
  }

  /** The workspace left the store (erased, or pruned empty): no re-ranking is owed to it. */
  forget(owner: OwnerState): void {
    this.unranked.delete(owner);
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
   * summary and history, deduplicated per (asset, session, kind or error code) by the workspace's
   * marks, the rule every other event follows), and `rebuffer` reports (playback quality history
   * of the asset if it is held, and of the workspace).
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
    // Marks only while they can matter (in the summary); an older duplicate counts in the history, as an asset's does.
    if (summarised && type !== TYPE.request) {
      const key = WorkspaceMarks.keyOf(c.asset[i] as string, c.session[i] as number);
      const marks = owner.workspaceMarks();
      const admitted = type === TYPE.error
        ? marks.admitError(key, c.code[i] as number, second, r.second)
        : marks.admitSession(key, type === TYPE.start ? MARK.start : type === TYPE.manifest ? MARK.manifest : MARK.ad, second, r.second);
      if (!admitted) return;
    }
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

  /**
   * The asset event `i` of `c` (of `type`, at `ts`) counts into: the one held, a new one in place
   * of an expired one, or undefined when the workspace has no room for a new one. Its window end
   * moves up to the event.
   */
  private assetFor(owner: OwnerState, c: EventColumns, i: number, type: number, ts: number, receivedAt: number): AssetState | undefined {
    const assetId = c.asset[i] as string;
    let asset = owner.assets.get(assetId);
    if (asset !== undefined && asset.anchorTs + RETENTION_MS < receivedAt) {
      owner.removeAsset(asset);
      asset = undefined;
    }
    if (asset === undefined) {
      if (!this.roomFor(owner, receivedAt)) return undefined;
      asset = new AssetState(assetId, this.scope.nextAssetSeq());
      owner.assets.set(assetId, asset);
    }
    asset.cachedStats = undefined;
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
    return asset;
  }

  /** Counts event `i` of `c`; false when it was dropped (a new asset past the workspace's limit). */
  private apply(c: EventColumns, i: number, r: Receipt): boolean {
    const owner = this.scope.ownerState(c.owner[i] as string);
    const type = c.type[i] as number;
    if (type === TYPE.rebuffer || c.workspaceOnly(i)) {
      this.applyOutsideAssets(c, i, type, owner, r);
      return true;
    }
    const ts = c.ts[i] as number;
    const asset = this.assetFor(owner, c, i, type, ts, r.receivedAt);
    if (asset === undefined) return false;

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
}

/** The window field of each type counted as a plain field (by TYPE). */
const FIELD_OF: readonly number[] = [F.requests, F.manifest, F.ad, F.starts];
