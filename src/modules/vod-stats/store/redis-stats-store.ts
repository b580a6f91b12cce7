import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../../platform/clock.js';
import type { PlaybackEvent } from '../events.schema.js';
import type { AssetStats, HistoryPoint, OwnerSummary, PruneResult, RecordResult, StatsStore, StoreSize } from './stats-store.js';
import { historyPoints } from './history.js';
import { DEFAULT_MAX_ASSETS_PER_WORKSPACE, RETENTION_MS, WINDOW_S, minuteOf, secondOf, summaryEnd, windowStart } from '../stats-window.js';
import { LuaScript } from '../../../platform/cluster/lua-script.js';
import { ASSET_META_FIELDS, assetKey, assetStatsOf, historySeriesOf, ownerHistoryKey, ownerKey, ownerMarksKey, ownerQoeKey, pushEvent, rankKey, seriesOf } from './redis-stats-codec.js';
import { statsLuaSource } from './stats-lua.js';

export interface RedisStatsStoreOptions {
  redis: Redis;
  clock: Clock;
  /** Every key of this store starts with it, e.g. `playline:stats:`. */
  prefix: string;
  /** stats_delay_ms, as in the embedded store (default 0). */
  delayMs?: number;
  /** Distinct assets one workspace may hold (default 100,000, as embedded). */
  maxAssetsPerWorkspace?: number;
  /**
   * Prune judges state dead only this far behind the clock (default 5 s), so an instance whose
   * clock lags a little never counts an event against state another instance already dropped.
   */
  pruneMarginMs?: number;
}

export interface CountOptions {
  /** The batch's journal position: a batch counted before is skipped. */
  batchKey?: string;
  /** Counts even while a rebuild runs (the rebuild's own replay). */
  force?: boolean;
}

/** The asset fields a read needs (see stats-lua-state.ts), in the order assetStatsOf takes them. */
const ASSET_READ = ['st', 'lt', 'sq', 'w'];

const script = new LuaScript(statsLuaSource());
/** Events per script call: one call blocks Redis for a few milliseconds at most. */
const EVENTS_PER_CALL = 2000;
const SCAN_COUNT = 200;
/** Decoded assets kept for reuse (about 300 bytes each). */
const MEMO_ENTRIES = 10_000;

/**
 * The cluster statistics store: the embedded store's rules (MemoryStatsStore) as one Lua script
 * over Redis hashes and sorted sets, so every instance counts into, deduplicates against and
 * reads the same state. Each call is atomic; the shared conformance suite checks that the
 * answers equal the embedded store's for the same batches.
 */
export class RedisStatsStore implements StatsStore {
  readonly prefix: string;
  private readonly redis: Redis;
  private readonly clock: Clock;
  private readonly delayMs: number;
  private readonly maxAssets: number;
  private readonly pruneMarginMs: number;
  /**
   * The last statistics decoded per asset with the hash they came from: an unchanged asset gets
   * the same AssetStats object back, so the view renders it once (as with the embedded store).
   */
  private readonly memo = new LRUCache<string, { hash: string; stats: AssetStats }>({ max: MEMO_ENTRIES });

  constructor(options: RedisStatsStoreOptions) {
    this.redis = options.redis;
    this.clock = options.clock;
    this.prefix = options.prefix;
    this.delayMs = options.delayMs ?? 0;
    this.maxAssets = options.maxAssetsPerWorkspace ?? DEFAULT_MAX_ASSETS_PER_WORKSPACE;
    this.pruneMarginMs = options.pruneMarginMs ?? 5_000;
  }

  private run(mode: string, ...args: (string | number)[]): Promise<unknown> {
    return script.run(this.redis, [this.prefix, mode, ...args]);
  }

  async record(events: readonly PlaybackEvent[], receivedAt: number): Promise<RecordResult> {
    const outcome = await this.count(events, receivedAt);
    if (outcome === 'busy') throw new Error('statistics are being rebuilt from the journal');
    return outcome;
  }

  /**
   * Counts a batch. With `batchKey` (its journal position) a batch already counted is skipped,
   * so replaying the journal or retrying after an error never counts twice. 'busy' while a
   * rebuild replays the journal (only the rebuild itself passes `force`): count it later.
   * Counted: the positions of the events dropped (new assets past the workspace's limit; none
   * reported for a part counted before, or with a stats delay).
   */
  async count(events: readonly PlaybackEvent[], receivedAt: number, options: CountOptions = {}): Promise<RecordResult | 'busy'> {
    const batchKey = options.batchKey ?? '';
    const dropped: number[] = [];
    for (let from = 0, part = 0; from < events.length; from += EVENTS_PER_CALL, part++) {
      const slice = events.slice(from, from + EVENTS_PER_CALL);
      const args: string[] = [];
      for (const e of slice) pushEvent(args, e);
      const key = batchKey === '' ? '' : `${batchKey}.${part}`;
      const force = options.force === true ? '1' : '0';
      const outcome = (await this.run('record', this.clock.now(), this.delayMs, this.maxAssets, key, receivedAt, slice.length, force, ...args)) as number[];
      if (outcome[0] === -1) return 'busy';
      for (let i = 1; i < outcome.length; i++) dropped.push(from + Number(outcome[i]));
    }
    return { dropped };
  }

  /** Deletes every key of this store (before a rebuild); `keep` names keys to leave alone. */
  async clear(keep: readonly string[] = []): Promise<number> {
    let deleted = 0;
    for await (const keys of this.redis.scanStream({ match: `${this.prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
      const doomed = keys.filter((k) => !keep.includes(k));
      if (doomed.length > 0) deleted += await this.redis.unlink(...doomed);
    }
    return deleted;
  }

  /** Whether the batch (its first part) was counted: for sweeps of batches a dead instance journaled. */
  async counted(batchKey: string): Promise<boolean> {
    return (await this.redis.exists(`${this.prefix}done:${batchKey}.0`)) === 1;
  }

  private async releaseDue(): Promise<void> {
    if (this.delayMs > 0) await this.run('release', this.clock.now(), this.delayMs, this.maxAssets);
  }

  async get(owner: string, assetId: string): Promise<AssetStats | undefined> {
    await this.releaseDue();
    const key = assetKey(this.prefix, 'a', owner, assetId);
    return this.decode(key, owner, assetId, await this.redis.hmget(key, ...ASSET_READ), this.clock.now());
  }

  async search(owner: string, assetIds: readonly string[]): Promise<AssetStats[]> {
    await this.releaseDue();
    if (assetIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    const keys = assetIds.map((id) => assetKey(this.prefix, 'a', owner, id));
    for (const key of keys) pipeline.hmget(key, ...ASSET_READ);
    const replies = (await pipeline.exec()) ?? [];
    const now = this.clock.now();
    const found: AssetStats[] = [];
    assetIds.forEach((id, i) => {
      const [error, flat] = replies[i] ?? [null, []];
      if (error) throw error;
      const stats = this.decode(keys[i] as string, owner, id, flat as unknown[], now);
      if (stats !== undefined) found.push(stats);
    });
    return found;
  }

  async top(owner: string, limit: number): Promise<AssetStats[]> {
    await this.releaseDue();
    if (limit <= 0) return [];
    const now = this.clock.now();
    const flat = (await this.run('top', now, owner, limit)) as unknown[];
    const found: AssetStats[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const id = String(flat[i]);
      const stats = this.decode(assetKey(this.prefix, 'a', owner, id), owner, id, flat[i + 1] as unknown[], now);
      if (stats !== undefined) found.push(stats);
    }
    return found;
  }

  private decode(key: string, owner: string, assetId: string, flat: readonly unknown[], now: number): AssetStats | undefined {
    const hash = flat.join('\u0001');
    const known = this.memo.get(key);
    if (known !== undefined && known.hash === hash) {
      return known.stats.ts + RETENTION_MS >= now ? known.stats : undefined;
    }
    const stats = assetStatsOf(owner, assetId, flat, now);
    if (stats === undefined) {
      this.memo.delete(key);
      return undefined;
    }
    this.memo.set(key, { hash, stats });
    return stats;
  }

  async history(owner: string, assetId: string | undefined, from: number, to: number): Promise<HistoryPoint[] | undefined> {
    await this.releaseDue();
    const now = this.clock.now();
    const first = minuteOf(Math.max(from, now - RETENTION_MS));
    const last = minuteOf(Math.min(to, now));
    let keys: [string, string];
    if (assetId === undefined) keys = [ownerHistoryKey(this.prefix, owner), ownerQoeKey(this.prefix, owner)];
    else {
      const fields = await this.redis.hmget(assetKey(this.prefix, 'a', owner, assetId), ...ASSET_READ);
      if (assetStatsOf(owner, assetId, fields, now) === undefined) return undefined;
      keys = [assetKey(this.prefix, 'h', owner, assetId), assetKey(this.prefix, 'q', owner, assetId)];
    }
    const [history, qoe] = await Promise.all(keys.map((key) => this.redis.hgetall(key)));
    const flat = (hash: Record<string, string> | undefined) => Object.entries(hash ?? {}).flat();
    const series = historySeriesOf(flat(history), flat(qoe));
    return historyPoints(series.history, series.qoe, first, last);
  }

  async summary(owner: string): Promise<OwnerSummary> {
    await this.releaseDue();
    // As the embedded store: with a delay, the 180 s ending that long ago (what has become retrievable).
    const ts = summaryEnd(this.clock.now(), this.delayMs);
    const last = secondOf(ts);
    const seconds = Array.from({ length: WINDOW_S }, (_, i) => windowStart(last) + i);
    const packed = await this.redis.hmget(ownerKey(this.prefix, owner), ...seconds.map(String));
    return { owner, ts, stats: seriesOf(seconds, packed).sum(seconds[0] as number, last) };
  }

  async prune(): Promise<PruneResult> {
    const result: PruneResult = { assetsRemoved: 0, bucketsRemoved: 0, sessionsRemoved: 0 };
    const begun = await this.run('pruneBegin', this.clock.now(), this.delayMs, this.pruneMarginMs, this.maxAssets);
    if (begun === '') return result; // a rebuild is replaying the journal
    const ref = Number(begun);
    for await (const owners of this.redis.sscanStream(`${this.prefix}owners`, { count: SCAN_COUNT }) as AsyncIterable<string[]>) {
      for (const owner of owners) {
        for await (const flat of this.redis.zscanStream(rankKey(this.prefix, owner), { count: SCAN_COUNT }) as AsyncIterable<string[]>) {
          const members = flat.filter((_, i) => i % 2 === 0);
          if (members.length === 0) continue;
          const [assets, buckets, sessions] = (await this.run('pruneAssets', ref, owner, ...members)) as number[];
          result.assetsRemoved += assets ?? 0;
          result.bucketsRemoved += buckets ?? 0;
          result.sessionsRemoved += sessions ?? 0;
        }
        const [, , marks] = (await this.run('pruneOwner', ref, owner)) as number[];
        result.sessionsRemoved += marks ?? 0;
      }
    }
    return result;
  }

  /**
   * Deletes every key of a workspace: each asset's hashes (found through its ranking), the
   * ranking and expiry sets, the summary, history and workspace-only marks hashes, and its entry in the owner set.
   * (Events of it still waiting for a stats delay are counted when released, then erased by the
   * next sweep of deleted workspaces.)
   */
  async eraseOwner(owner: string): Promise<void> {
    const rank = rankKey(this.prefix, owner);
    for await (const flat of this.redis.zscanStream(rank, { count: SCAN_COUNT }) as AsyncIterable<string[]>) {
      const ids = flat.filter((_, i) => i % 2 === 0).map((member) => member.slice(32));
      const keys = ids.flatMap((id) => (['a', 'h', 'q', 's'] as const).map((kind) => assetKey(this.prefix, kind, owner, id)));
      if (keys.length > 0) await this.redis.unlink(...keys);
    }
    await this.redis.unlink(rank, `${this.prefix}x:${owner}`, ownerKey(this.prefix, owner), ownerHistoryKey(this.prefix, owner), ownerQoeKey(this.prefix, owner), ownerMarksKey(this.prefix, owner));
    await this.redis.srem(`${this.prefix}owners`, owner);
    const mine = assetKey(this.prefix, 'a', owner, '');
    for (const key of [...this.memo.keys()]) if (key.startsWith(mine)) this.memo.delete(key);
  }

  async ownerIds(): Promise<string[]> {
    const ids: string[] = [];
    for await (const owners of this.redis.sscanStream(`${this.prefix}owners`, { count: SCAN_COUNT }) as AsyncIterable<string[]>) ids.push(...owners);
    return [...new Set(ids)];
  }

  /** Counts by scanning every asset: for tests and occasional inspection, not for hot paths. */
  async size(): Promise<StoreSize> {
    const size: StoreSize = { owners: 0, assets: 0, buckets: 0, sessions: 0, ownerBuckets: 0, pendingEvents: 0 };
    size.pendingEvents = Number((await this.redis.get(`${this.prefix}pendingEvents`)) ?? 0);
    for await (const owners of this.redis.sscanStream(`${this.prefix}owners`, { count: SCAN_COUNT }) as AsyncIterable<string[]>) {
      for (const owner of owners) {
        size.owners++;
        size.ownerBuckets +=
          (await this.redis.hlen(ownerKey(this.prefix, owner))) +
          (await this.redis.hlen(ownerHistoryKey(this.prefix, owner))) +
          (await this.redis.hlen(ownerQoeKey(this.prefix, owner)));
        size.sessions += await this.redis.hlen(ownerMarksKey(this.prefix, owner));
        for await (const flat of this.redis.zscanStream(rankKey(this.prefix, owner), { count: SCAN_COUNT }) as AsyncIterable<string[]>) {
          const pipeline = this.redis.pipeline();
          const ids = flat.filter((_, i) => i % 2 === 0).map((member) => member.slice(32));
          for (const id of ids) {
            for (const kind of ['a', 'h', 'q', 's'] as const) pipeline.hlen(assetKey(this.prefix, kind, owner, id));
          }
          const replies = (await pipeline.exec()) ?? [];
          const count = (i: number) => Number(replies[i]?.[1] ?? 0);
          for (let i = 0; i < ids.length; i++) {
            const fields = count(4 * i);
            if (fields === 0) continue;
            size.assets++;
            size.buckets += fields - ASSET_META_FIELDS + count(4 * i + 1) + count(4 * i + 2);
            size.sessions += count(4 * i + 3);
          }
        }
      }
    }
    return size;
  }

  /** Assets held (cheap: one ZCARD per workspace), for metrics. */
  async assetCount(): Promise<number> {
    let count = 0;
    for await (const owners of this.redis.sscanStream(`${this.prefix}owners`, { count: SCAN_COUNT }) as AsyncIterable<string[]>) {
      for (const owner of owners) count += await this.redis.zcard(rankKey(this.prefix, owner));
    }
    return count;
  }
}
