import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { Redis } from 'ioredis';
import type { ClusterIngestService } from './ingest/cluster-ingest.service.js';
import type { IngestTotals } from './ingest/event-ingest.js';
import type { IngestAdmission } from './ingest/ingest-admission.js';
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

/**
 * Events the store did not count because they named a new asset of a workspace at its asset
 * limit (answered as `asset_limit_reached`, or dropped later when a stats delay holds them).
 * `read` gives the store's running total; a total that went down (Redis rebuilt) starts over.
 */
const registerDroppedCounter = (registry: Registry, read: () => number | Promise<number>, scope = ''): void => {
  let reported = 0;
  new Counter({
    name: 'playline_vod_stats_events_dropped_total',
    help: `Events not counted: a new asset of a workspace holding the maximum number of assets (PLAYLINE_MAX_ASSETS_PER_WORKSPACE)${scope}`,
    registers: [registry],
    async collect() {
      const total = await read();
      this.inc(Math.max(0, total - reported));
      reported = total;
    },
  });
};

/** Ingest bytes held at once, and the batches refused for lack of room (503 + Retry-After). */
export const registerAdmissionMetrics = (registry: Registry, admission: IngestAdmission): void => {
  new Gauge({
    name: 'playline_vod_stats_ingest_bytes_in_flight',
    help: 'Event batch bytes being received or ingested right now (bounded by PLAYLINE_INGEST_MAX_BYTES_IN_FLIGHT)',
    registers: [registry],
    collect() {
      this.set(admission.bytesInFlight);
    },
  });
  let reported = 0;
  new Counter({
    name: 'playline_vod_stats_ingest_refused_total',
    help: 'Event batches refused with 503 and Retry-After because too many ingest bytes were in flight',
    registers: [registry],
    collect() {
      this.inc(admission.refused - reported);
      reported = admission.refused;
    },
  });
};

/** VOD statistics metrics of the embedded mode. */
export const registerVodStatsMetrics = (registry: Registry, ingest: EventIngestService, store: StatsStore & { readonly droppedEvents: number }): void => {
  registerIngestCounters(registry, ingest);
  registerDroppedCounter(registry, () => store.droppedEvents);

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
export const registerClusterStatsMetrics = (registry: Registry, ingest: ClusterIngestService, store: RedisStatsStore, redis: Pick<Redis, 'get'>): void => {
  registerIngestCounters(registry, ingest, ' (by this instance)');
  // The Lua counts drops in `<prefix>dropped` (stats-apply.lua).
  registerDroppedCounter(registry, async () => Number((await redis.get(`${store.prefix}dropped`)) ?? 0), ', cluster-wide');
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
