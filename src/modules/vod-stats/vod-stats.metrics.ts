import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { ClusterIngestService } from './ingest/cluster-ingest.service.js';
import type { IngestTotals } from './ingest/event-ingest.js';
import type { EventIngestService } from './ingest/event-ingest.service.js';
import type { RedisStatsStore } from './store/redis-stats-store.js';
import type { StatsStore } from './store/stats-store.js';

/** Running ingest totals, as both ingest pipelines (embedded and cluster) keep them. */
export interface IngestTotalsSource {
  readonly totals: Readonly<IngestTotals>;
}

/**
 * The ingest counters, the same names in embedded and cluster mode (so dashboards work for
 * both); read from running totals when scraped (nothing on the hot path). `scope` ends the help.
 */
export const registerIngestCounters = (registry: Registry, ingest: IngestTotalsSource, scope = ''): void => {
  const reported = { batches: 0, accepted: 0, rejected: 0 };
  const counter = (name: keyof typeof reported, help: string) =>
    new Counter({
      name: `playline_vod_stats_${name === 'batches' ? 'batches' : `events_${name}`}_total`,
      help: `${help}${scope}`,
      registers: [registry],
      collect() {
        const total = ingest.totals[name];
        this.inc(Math.max(0, total - reported[name]));
        reported[name] = total;
      },
    });
  counter('batches', 'Ingest batches journaled and counted');
  counter('accepted', 'Playback events accepted');
  counter('rejected', 'Playback events rejected (reported per index in the 202 answer)');
};

/** VOD statistics metrics of the embedded mode. */
export const registerVodStatsMetrics = (registry: Registry, ingest: EventIngestService, store: StatsStore): void => {
  registerIngestCounters(registry, ingest);

  new Gauge({
    name: 'playline_vod_stats_assets',
    help: 'Assets whose statistics are held (within the 24 h serving window)',
    registers: [registry],
    async collect() {
      this.set((await store.size()).assets);
    },
  });
  new Gauge({
    name: 'playline_vod_stats_journal_backlog_bytes',
    help: 'Journal bytes a restart would replay on top of the latest snapshot',
    registers: [registry],
    collect() {
      this.set(ingest.journalBacklog());
    },
  });
};

/**
 * Statistics metrics in cluster mode: the embedded mode's names (so dashboards work for both)
 * plus what only a cluster has. Read when scraped, nothing on the hot path.
 */
export const registerClusterStatsMetrics = (registry: Registry, ingest: ClusterIngestService, store: RedisStatsStore): void => {
  registerIngestCounters(registry, ingest, ' (by this instance)');
  new Gauge({
    name: 'playline_vod_stats_assets',
    help: 'Assets whose statistics are held (within the 24 h serving window), cluster-wide',
    registers: [registry],
    async collect() {
      this.set(await store.assetCount());
    },
  });
  new Gauge({
    name: 'playline_cluster_held_batches',
    help: 'Batches this instance journaled but could not count in Redis yet (retried every second)',
    registers: [registry],
    collect() {
      this.set(ingest.heldBatches());
    },
  });
};
