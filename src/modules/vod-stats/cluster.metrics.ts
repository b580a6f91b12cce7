import { Gauge } from 'prom-client';
import { registerIngestCounters } from './vod-stats.metrics.js';
import type { Registry } from 'prom-client';
import type { ClusterIngestService } from './ingest/cluster-ingest.service.js';
import type { RedisStatsStore } from './store/redis-stats-store.js';

/**
 * Statistics metrics in cluster mode: the embedded mode's names (so dashboards work for both)
 * plus what only a cluster has. Read when scraped, nothing on the hot path.
 */
export const registerClusterMetrics = (registry: Registry, ingest: ClusterIngestService, store: RedisStatsStore): void => {
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
