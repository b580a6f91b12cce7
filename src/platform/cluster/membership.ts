import type { Redis } from 'ioredis';
import type { Clock } from '../clock.js';
import { parseEventBatch } from '../../modules/vod-stats/ingest/event-batch.js';
import { RETENTION_MS } from '../../modules/vod-stats/stats-window.js';
import type { ClusterIngestService } from '../../modules/vod-stats/ingest/cluster-ingest.service.js';
import type { PostgresEventJournal } from '../../modules/vod-stats/journal/postgres-journal.js';
import type { RedisStatsStore } from '../../modules/vod-stats/store/redis-stats-store.js';
import { JOURNAL_MARGIN_MS, type StatsRebuild } from '../../modules/vod-stats/ingest/stats-rebuild.js';

export interface NodeLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ClusterNodeOptions {
  redis: Redis;
  /** Prefix of the registry keys, e.g. `playline:cluster:`. */
  prefix: string;
  instanceId: string;
  clock: Clock;
  ingest: ClusterIngestService;
  store: RedisStatsStore;
  journal: PostgresEventJournal;
  rebuild: StatsRebuild;
  log: NodeLog;
  /** Heartbeat and housekeeping period. Default 1 s. */
  heartbeatMs?: number;
  /** An instance silent for this long is dead: its uncounted batches are counted for it. Default 15 s. */
  deadAfterMs?: number;
  /** Cluster-wide, one instance prunes this often. Default 60 s. */
  pruneEveryMs?: number;
  /** Cluster-wide, one instance deletes journal rows past the window this often. Default 10 min. */
  retentionEveryMs?: number;
  /** Told the number of live instances after every heartbeat (callback rate shares). */
  onMembers?: (alive: number) => void;
}

interface Beat {
  beatAt: number;
  countedBefore: number;
}

/**
 * One instance's part in the cluster: a heartbeat in Redis that says up to when its journaled
 * batches are counted; counting the rest for an instance that died (kill -9 between commit and
 * count); and the cluster-wide chores, each run by one instance at a time (an expiring Redis
 * key elects it): prune, journal retention, and a rebuild when Redis lost the statistics.
 */
export class ClusterNode {
  private readonly o: ClusterNodeOptions;
  private readonly instancesKey: string;
  private readonly heartbeatMs: number;
  private readonly deadAfterMs: number;
  private cancelTick: (() => void) | undefined;
  private ticking: Promise<void> | undefined;
  private readonly chores = new Map<string, Promise<unknown>>();
  private running = false;

  constructor(options: ClusterNodeOptions) {
    this.o = options;
    this.instancesKey = `${options.prefix}instances`;
    this.heartbeatMs = options.heartbeatMs ?? 1000;
    this.deadAfterMs = options.deadAfterMs ?? 15_000;
  }

  /** Registers, rebuilds the statistics first if Redis has none, then keeps the heartbeat going. */
  async start(): Promise<void> {
    await this.beat();
    if (await this.o.rebuild.needed()) {
      const result = await this.o.rebuild.rebuild();
      if (result === 'busy') this.o.log.info({}, 'another instance is rebuilding the statistics from the journal');
      else if (result.batches === 0) this.o.log.info(result, 'Redis statistics started (the journal holds no batches yet)');
      else this.o.log.warn(result, 'Redis held no statistics: rebuilt them from the PostgreSQL journal');
    }
    this.running = true;
    this.schedule();
  }

  private schedule(): void {
    if (!this.running) return;
    this.cancelTick = this.o.clock.setTimer(() => {
      this.cancelTick = undefined;
      this.ticking = this.tick()
        .catch((err: unknown) => this.o.log.error({ err }, 'cluster housekeeping failed; trying again'))
        .finally(() => {
          this.ticking = undefined;
          this.schedule();
        });
    }, this.heartbeatMs);
  }

  /** One heartbeat plus whatever housekeeping is due (public for tests). */
  async tick(): Promise<void> {
    await this.beat();
    await this.sweepDead();
    const { rebuild, store, journal, clock } = this.o;
    if (!this.chores.has('rebuild') && (await rebuild.needed()) && !(await rebuild.running())) {
      this.chore('rebuild', async () => {
        const result = await rebuild.rebuild();
        if (result !== 'busy') this.o.log.warn(result, 'Redis lost the statistics (flushed?): rebuilt them from the journal');
      });
    }
    if (await this.elected('prune', this.o.pruneEveryMs ?? 60_000)) this.chore('prune', () => store.prune());
    if (await this.elected('retention', this.o.retentionEveryMs ?? 600_000)) {
      this.chore('retention', () => journal.deleteBefore(clock.now() - RETENTION_MS - JOURNAL_MARGIN_MS));
    }
  }

  private chore(name: string, run: () => Promise<unknown>): void {
    if (this.chores.has(name)) return;
    const done = run()
      .catch((err: unknown) => this.o.log.error({ err, chore: name }, 'cluster chore failed'))
      .finally(() => this.chores.delete(name));
    this.chores.set(name, done);
  }

  /** True for the one instance that claims `chore` for the next `everyMs` (an expiring key). */
  private async elected(chore: string, everyMs: number): Promise<boolean> {
    return (await this.o.redis.set(`${this.o.prefix}due:${chore}`, this.o.instanceId, 'PX', everyMs, 'NX')) === 'OK';
  }

  private async beat(): Promise<void> {
    const beat: Beat = { beatAt: this.o.clock.now(), countedBefore: this.o.ingest.countedBefore() };
    await this.o.redis.hset(this.instancesKey, this.o.instanceId, JSON.stringify(beat));
  }

  /** The instances in the registry, alive or not yet swept. */
  async members(): Promise<{ id: string; beatAt: number; countedBefore: number; alive: boolean }[]> {
    const now = this.o.clock.now();
    return Object.entries(await this.o.redis.hgetall(this.instancesKey))
      .map(([id, text]) => ({ id, ...(JSON.parse(text) as Beat) }))
      .map((m) => ({ ...m, alive: m.beatAt + this.deadAfterMs > now }))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /** Counts the batches that instances silent for `deadAfterMs` journaled but may not have counted. */
  async sweepDead(): Promise<number> {
    const now = this.o.clock.now();
    let swept = 0;
    const registry = Object.entries(await this.o.redis.hgetall(this.instancesKey));
    this.o.onMembers?.(registry.filter(([, text]) => (JSON.parse(text) as Beat).beatAt + this.deadAfterMs > now).length || 1);
    for (const [id, text] of registry) {
      if (id === this.o.instanceId) continue;
      const beat = JSON.parse(text) as Beat;
      if (beat.beatAt + this.deadAfterMs > now) continue;
      const lock = `${this.o.prefix}sweep:${id}`;
      if ((await this.o.redis.set(lock, this.o.instanceId, 'PX', 60_000, 'NX')) !== 'OK') continue;
      const counted = await this.countFor(id, beat.countedBefore);
      if (counted === 'busy') {
        await this.o.redis.del(lock); // a rebuild runs (and replays these batches too); retry after it
        continue;
      }
      await this.o.redis.hdel(this.instancesKey, id);
      this.o.log.warn({ instance: id, batches: counted }, 'instance stopped answering: counted the batches it journaled last');
      swept += counted;
    }
    return swept;
  }

  private async countFor(instanceId: string, since: number): Promise<number | 'busy'> {
    let after = 0;
    let batches = 0;
    for (;;) {
      const page = await this.o.journal.batchesOf(instanceId, since, after);
      for (const batch of page) {
        const { events } = parseEventBatch(batch.body, batch.kind, { authOwner: batch.authOwner, anyOwner: batch.anyOwner, now: batch.receivedAt });
        if ((await this.o.store.count(events, batch.receivedAt, { batchKey: String(batch.seq) })) === 'busy') return 'busy';
        after = batch.seq;
        batches++;
      }
      if (page.length === 0) return batches;
    }
  }

  /** Stops housekeeping; after ingest drained, leaves the registry unless batches are still held. */
  async stop(): Promise<void> {
    this.running = false;
    this.cancelTick?.();
    this.cancelTick = undefined;
    await this.ticking;
    await Promise.all(this.chores.values());
    await this.o.ingest.close();
    if (this.o.ingest.heldBatches() === 0) await this.o.redis.hdel(this.instancesKey, this.o.instanceId);
    else await this.beat();
  }
}
