import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../../../platform/clock.js';
import type { SharedStatsState } from '../../../platform/cluster/cluster-status.service.js';
import { parseEventBatchSync } from './event-batch.js';
import { replayContext } from './event-ingest.js';
import { RETENTION_MS } from '../stats-window.js';
import { LuaScript } from '../../../platform/cluster/lua-script.js';
import { bindingToken, type ClusterJournal } from '../journal/cluster-journal.js';
import type { RedisStatsStore } from '../store/redis-stats-store.js';

/**
 * The journal is replayed (and kept) this far beyond the serving window: an event received
 * a few minutes before the window still shapes state inside it (late events, dedupe marks).
 */
export const JOURNAL_MARGIN_MS = 60 * 60_000;

export interface StatsRebuildOptions {
  redis: Redis;
  store: RedisStatsStore;
  journal: ClusterJournal;
  clock: Clock;
  /** The rebuild flag expires this long after its last renewal (a rebuilder that died). Default 30 s. */
  flagMs?: number;
}

export interface RebuildResult {
  batches: number;
  events: number;
  /** Journal seq of the last batch replayed (0 when the journal was empty). */
  lastSeq: number;
}

// Renews or deletes the flag only while it still holds our token.
const renewFlag = new LuaScript(`if redis.call('GET', ARGV[1]) == ARGV[2] then return redis.call('PEXPIRE', ARGV[1], ARGV[3]) end return 0`);
const dropFlag = new LuaScript(`if redis.call('GET', ARGV[1]) == ARGV[2] then return redis.call('DEL', ARGV[1]) end return 0`);

/**
 * Rebuilds the Redis statistics from the PostgreSQL journal (the source of truth): after a
 * FLUSHALL, a new Redis, or on an operator's request. While it runs, `P rebuilding` holds every
 * other count back (ingest keeps journaling and counts afterwards, skipping what the replay
 * counted), so the replay sees batches in journal order, as they were counted the first time.
 */
export class StatsRebuild implements SharedStatsState {
  private readonly redis: Redis;
  private readonly store: RedisStatsStore;
  private readonly journal: ClusterJournal;
  private readonly clock: Clock;
  private readonly flagMs: number;
  readonly flagKey: string;
  readonly epochKey: string;
  readonly bindingKey: string;

  constructor(options: StatsRebuildOptions) {
    this.redis = options.redis;
    this.store = options.store;
    this.journal = options.journal;
    this.clock = options.clock;
    this.flagMs = options.flagMs ?? 30_000;
    this.flagKey = `${this.store.prefix}rebuilding`;
    this.epochKey = `${this.store.prefix}epoch`;
    this.bindingKey = `${this.store.prefix}binding`;
  }

  /** True when Redis holds no statistics state at all (new, flushed or evicted): a rebuild is due. */
  async needed(): Promise<boolean> {
    return (await this.redis.exists(this.epochKey)) === 0;
  }

  async running(): Promise<boolean> {
    return (await this.redis.exists(this.flagKey)) === 1;
  }

  /** When the statistics were last started or rebuilt (Unix ms); null: never (a rebuild is due). */
  async builtAt(): Promise<number | null> {
    const epoch = await this.redis.get(this.epochKey);
    return epoch === null ? null : Number(epoch);
  }

  /** Replays the journal's serving window into an emptied store; 'busy' when another rebuild runs. */
  async rebuild(): Promise<RebuildResult | 'busy'> {
    const token = randomUUID();
    if ((await this.redis.set(this.flagKey, token, 'PX', this.flagMs, 'NX')) !== 'OK') return 'busy';
    const renew = setInterval(() => {
      void renewFlag.run(this.redis, [this.flagKey, token, this.flagMs]).catch(() => undefined);
    }, Math.max(10, Math.floor(this.flagMs / 3)));
    // Real time, like the flag's TTL in Redis (not the injectable application clock).
    renew.unref();
    try {
      // A new epoch first: an instance that compares now finds the statistics not bound until the replay ends.
      const binding = await this.journal.nextEpoch();
      await this.store.clear([this.flagKey]);
      const result: RebuildResult = { batches: 0, events: 0, lastSeq: 0 };
      const since = this.clock.now() - RETENTION_MS - JOURNAL_MARGIN_MS;
      const replayed = await this.journal.replayFrom(0, since, async (batch) => {
        const { events } = parseEventBatchSync(batch.body, batch.kind, replayContext(batch));
        if (events.length === 0) return;
        await this.store.count(events, batch.receivedAt, { batchKey: batch.batchKey, force: true });
        result.batches++;
        result.events += events.length;
      });
      result.lastSeq = replayed.lastSeq;
      await this.redis.multi().set(this.epochKey, String(this.clock.now())).set(this.bindingKey, bindingToken(binding)).exec();
      return result;
    } finally {
      clearInterval(renew);
      await dropFlag.run(this.redis, [this.flagKey, token]).catch(() => undefined);
    }
  }

  /** Marks an empty store as started and bound to the journal (a new cluster with an empty journal needs no replay). */
  async markStarted(): Promise<void> {
    const binding = bindingToken(await this.journal.binding());
    await this.redis.multi().set(this.epochKey, String(this.clock.now()), 'NX').set(this.bindingKey, binding, 'NX').exec();
  }
}
