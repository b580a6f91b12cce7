import type { BackgroundWork } from '../../platform/background-work.js';
import type { Clock } from '../../platform/clock.js';
import type { Cluster } from '../../platform/cluster/cluster.js';
import type { ClusterLog, Membership } from '../../platform/cluster/membership.js';
import { ClusterIngestService } from './ingest/cluster-ingest.service.js';
import { parseEventBatch } from './ingest/event-batch.js';
import { JOURNAL_MARGIN_MS, StatsRebuild } from './ingest/stats-rebuild.js';
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
  const { ingest, store, journal, rebuild, clock, log } = parts;
  membership.report('countedBefore', () => ingest.countedBefore());
  membership.stayListedWhile(() => ingest.heldBatches() > 0);
  membership.onDead(async (member) => {
    const batches = await countBatchesOf(parts, member.id, member.report.countedBefore ?? 0);
    return batches === 'busy' ? 'busy' : { batches };
  });
  membership.chore({
    name: 'rebuild',
    due: async () => (await rebuild.needed()) && !(await rebuild.running()),
    run: async () => {
      const result = await rebuild.rebuild();
      if (result !== 'busy') log.warn(result, 'Redis lost the statistics (flushed?): rebuilt them from the journal');
    },
  });
  membership.chore({ name: 'prune', everyMs: PRUNE_EVERY_MS, run: () => store.prune() });
  membership.chore({ name: 'retention', everyMs: RETENTION_EVERY_MS, run: () => journal.deleteBefore(clock.now() - RETENTION_MS - JOURNAL_MARGIN_MS) });
}

/** Counts the batches `instanceId` journaled since `since`; 'busy' while a rebuild runs (it replays them too). */
async function countBatchesOf(parts: Pick<ClusterStatsParts, 'journal' | 'store'>, instanceId: string, since: number): Promise<number | 'busy'> {
  let after = 0;
  let batches = 0;
  for (;;) {
    const page = await parts.journal.batchesOf(instanceId, since, after);
    for (const batch of page) {
      const { events } = parseEventBatch(batch.body, batch.kind, { authOwner: batch.authOwner, anyOwner: batch.anyOwner, now: batch.receivedAt });
      if ((await parts.store.count(events, batch.receivedAt, { batchKey: String(batch.seq) })) === 'busy') return 'busy';
      after = batch.seq;
      batches++;
    }
    if (page.length === 0) return batches;
  }
}

/** Statistics in cluster mode: PostgreSQL journal, Redis store, and their part in the cluster. */
export function createClusterStats(deps: VodStatsDeps, cluster: Cluster): ClusterStats {
  const { config, clock, storage, log } = deps;
  const { redis, instanceId } = cluster;
  const store = new RedisStatsStore({ redis, clock, prefix: `${cluster.prefix}stats:`, delayMs: config.statsDelayMs });
  const journal = new PostgresEventJournal({ db: storage.db, instanceId });
  const ingest = new ClusterIngestService({ store, journal, ...pipelineDeps(deps) });
  const rebuild = new StatsRebuild({ redis, store, journal, clock });
  joinStatsToCluster(cluster.membership, { ingest, store, journal, rebuild, clock, log });
  registerClusterStatsMetrics(deps.metrics.registry, ingest, store);
  return {
    ingest,
    store,
    journal,
    rebuild,
    work: {
      name: 'cluster statistics',
      // Redis holding no statistics (new, flushed, evicted): rebuild them before serving.
      async start() {
        if (!(await rebuild.needed())) return;
        const result = await rebuild.rebuild();
        if (result === 'busy') log.info({}, 'another instance is rebuilding the statistics from the journal');
        else if (result.batches === 0) log.info(result, 'Redis statistics started (the journal holds no batches yet)');
        else log.warn(result, 'Redis held no statistics: rebuilt them from the PostgreSQL journal');
      },
      // In-flight batches finish, held ones get a last try; the membership then leaves (or stays listed while some are held).
      stop: () => ingest.close(),
    },
  };
}
