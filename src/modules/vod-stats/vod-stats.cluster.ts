import type { Redis } from 'ioredis';
import type { BackgroundWork } from '../../platform/background-work.js';
import type { Clock } from '../../platform/clock.js';
import type { Cluster } from '../../platform/cluster/cluster.js';
import type { ClusterLog, Membership } from '../../platform/cluster/membership.js';
import { ClusterIngestService } from './ingest/cluster-ingest.service.js';
import { parseEventBatchSync } from './ingest/event-batch.js';
import { replayContext } from './ingest/event-ingest.js';
import { JOURNAL_MARGIN_MS, StatsRebuild } from './ingest/stats-rebuild.js';
import { StatsBinding } from './ingest/stats-binding.js';
import type { ClusterJournal } from './journal/cluster-journal.js';
import { PostgresEventJournal } from './journal/postgres-journal.js';
import { RedisStatsStore } from './store/redis-stats-store.js';
import { RETENTION_MS } from './stats-window.js';
import { pipelineDeps, type VodStatsDeps } from './vod-stats.deps.js';
import { registerClusterStatsMetrics } from './vod-stats.metrics.js';

export interface ClusterStats {
  ingest: ClusterIngestService;
  store: RedisStatsStore;
  journal: PostgresEventJournal;
  rebuild: StatsRebuild;
  binding: StatsBinding;
  work: BackgroundWork;
}

/** Cluster-wide, one instance prunes this often. */
const PRUNE_EVERY_MS = 60_000;
/** Cluster-wide, one instance deletes journal rows past the window this often. */
const RETENTION_EVERY_MS = 600_000;

/** The statistics' part in the cluster, as the membership runs it. */
export interface ClusterStatsParts {
  ingest: ClusterIngestService;
  store: RedisStatsStore;
  journal: ClusterJournal;
  rebuild: StatsRebuild;
  binding: StatsBinding;
  /** Rebuild statistics bound to another deployment or epoch (PLAYLINE_STATS_REBUILD_ON_MISMATCH), or leave them and count nothing. */
  rebuildOnMismatch: boolean;
  clock: Clock;
  log: ClusterLog;
}

/**
 * Registers what statistics need from the membership: each heartbeat says up to when this
 * instance's journaled batches are counted; the batches a dead instance journaled after that are
 * counted for it (kill -9 between commit and count); one instance at a time prunes, deletes
 * journal rows past the window, and rebuilds the statistics when Redis lost them.
 */
export function joinStatsToCluster(membership: Membership, parts: ClusterStatsParts): void {
  const { ingest, store, journal, rebuild, binding, rebuildOnMismatch, clock, log } = parts;
  membership.report('countedBefore', () => ingest.countedBefore());
  membership.stayListedWhile(() => ingest.heldBatches() > 0);
  membership.onDead(async (member) => {
    const batches = await countBatchesOf(parts, member.id, member.report.countedBefore ?? 0);
    return batches === 'busy' ? 'busy' : { batches };
  });
  membership.chore({
    name: 'rebuild',
    // Redis lost the statistics, or this instance does not find them bound to its journal
    // (checked again each heartbeat until they are, e.g. once another instance rebuilt them).
    due: async () => {
      if (await rebuild.running()) return false;
      if (await rebuild.needed()) return true;
      if (binding.bound) return false;
      const verdict = await binding.check();
      if (verdict.kind === 'foreign' && !rebuildOnMismatch) log.error({ verdict }, StatsBinding.refusal(verdict, store.prefix));
      return verdict.kind === 'empty' || (verdict.kind === 'foreign' && rebuildOnMismatch);
    },
    run: async () => {
      const result = await rebuild.rebuild();
      if (result !== 'busy') log.warn(result, 'the Redis statistics were missing or not bound to this journal: rebuilt them from it');
      await binding.check();
    },
  });
  membership.chore({ name: 'prune', everyMs: PRUNE_EVERY_MS, run: () => store.prune() });
  membership.chore({ name: 'retention', everyMs: RETENTION_EVERY_MS, run: () => journal.deleteBefore(clock.now() - RETENTION_MS - JOURNAL_MARGIN_MS) });
}

/** Counts the batches `instanceId` journaled since `since`; 'busy' while a rebuild runs (it replays them too) or Redis is not bound. */
async function countBatchesOf(parts: Pick<ClusterStatsParts, 'journal' | 'store' | 'binding'>, instanceId: string, since: number): Promise<number | 'busy'> {
  let after = 0;
  let batches = 0;
  for (;;) {
    if (!parts.binding.bound) return 'busy';
    const page = await parts.journal.batchesOf(instanceId, since, after);
    for (const batch of page) {
      const { events } = parseEventBatchSync(batch.body, batch.kind, replayContext(batch));
      if ((await parts.store.count(events, batch.receivedAt, { batchKey: batch.batchKey })) === 'busy') return 'busy';
      after = batch.seq;
      batches++;
    }
    if (page.length === 0) return batches;
  }
}

/**
 * Start-up: statistics missing (new, flushed, evicted Redis) or bound to another deployment or
 * epoch are rebuilt from the journal before serving, or (rebuilds off) the start is refused.
 */
export async function startClusterStats(parts: Pick<ClusterStatsParts, 'binding' | 'rebuild' | 'rebuildOnMismatch' | 'store' | 'log'>): Promise<void> {
  const { binding, rebuild, rebuildOnMismatch, store, log } = parts;
  const verdict = await binding.check();
  if (verdict.kind === 'bound') return;
  if (verdict.kind === 'foreign') {
    if (!rebuildOnMismatch) throw new Error(StatsBinding.refusal(verdict, store.prefix));
    log.warn({ verdict }, 'Redis holds statistics not bound to this journal (another deployment, or the database was restored): rebuilding them from the journal');
  }
  const result = await rebuild.rebuild();
  if (result === 'busy') {
    log.info({}, 'another instance is rebuilding the statistics from the journal; batches are held until it ends');
    return;
  }
  await binding.check();
  if (result.batches === 0) log.info(result, 'Redis statistics started (the journal holds no batches yet)');
  else log.warn(result, 'rebuilt the Redis statistics from the PostgreSQL journal');
}

/**
 * After every Redis reconnect another Redis may answer (a failover, a restore): nothing is
 * counted until the binding is checked again; a mismatch is then rebuilt by the chore.
 */
export function watchRedisConnection(redis: Pick<Redis, 'on'>, binding: StatsBinding, log: ClusterLog): void {
  redis.on('close', () => binding.lost());
  redis.on('ready', () => {
    binding.check().then(
      (verdict) => (verdict.kind === 'foreign' ? log.error({ verdict }, 'after a Redis reconnect the statistics are not bound to this journal: counting held') : undefined),
      (err: unknown) => log.warn({ err }, 'the statistics binding could not be checked after a Redis reconnect; counting held'),
    );
  });
}

/** Statistics in cluster mode: PostgreSQL journal, Redis store, and their part in the cluster. */
export function createClusterStats(deps: VodStatsDeps, cluster: Cluster): ClusterStats {
  const { config, clock, storage, log } = deps;
  const { redis, instanceId } = cluster;
  const store = new RedisStatsStore({ redis, clock, prefix: `${cluster.prefix}stats:`, delayMs: config.statsDelayMs, maxAssetsPerWorkspace: config.maxAssetsPerWorkspace });
  const journal = new PostgresEventJournal({ db: storage.db, instanceId, clock });
  const binding = new StatsBinding({ redis, journal, prefix: store.prefix });
  const ingest = new ClusterIngestService({ store, journal, canCount: () => binding.bound, ...pipelineDeps(deps) });
  const rebuild = new StatsRebuild({ redis, store, journal, clock });
  const parts = { ingest, store, journal, rebuild, binding, rebuildOnMismatch: config.statsRebuildOnMismatch, clock, log };
  joinStatsToCluster(cluster.membership, parts);
  registerClusterStatsMetrics(deps.metrics.registry, ingest, store, redis);
  watchRedisConnection(redis, binding, log);
  return {
    ingest,
    store,
    journal,
    rebuild,
    binding,
    work: {
      name: 'cluster statistics',
      start: () => startClusterStats(parts),
      // In-flight batches finish, held ones get a last try; the membership then leaves (or stays listed while some are held).
      stop: () => ingest.close(),
    },
  };
}
