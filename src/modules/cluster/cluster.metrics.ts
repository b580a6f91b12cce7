import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { ClusterIngestService } from './cluster-ingest.service.js';
import type { RedisStatsStore } from './redis-stats-store.js';

/**
 * Statistics metrics in cluster mode: the embedded mode's names (so dashboards work for both)
 * plus what only a cluster has. Read when scraped, nothing on the hot path.
 */
export const registerClusterMetrics = (registry: Registry, ingest: ClusterIngestService, store: RedisStatsStore): void => {
  const reported = { batches: 0, accepted: 0, rejected: 0 };
  const counter = (name: keyof typeof reported, help: string) =>
    new Counter({
      name: `playline_vod_stats_${name === 'batches' ? 'batches' : `events_${name}`}_total`,
      help,
      registers: [registry],
      collect() {
        const total = ingest.totals[name];
        this.inc(Math.max(0, total - reported[name]));
        reported[name] = total;
      },
    });
  counter('batches', 'Ingest batches journaled (by this instance)');
  counter('accepted', 'Playback events accepted (by this instance)');
  counter('rejected', 'Playback events rejected (reported per index in the 202 answer)');
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
