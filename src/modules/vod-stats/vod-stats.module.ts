import type { BackgroundWork } from '../../platform/background-work.js';
import type { EventIngest } from './ingest/event-ingest.js';
import { IngestAdmission } from './ingest/ingest-admission.js';
import type { StatsRebuild } from './ingest/stats-rebuild.js';
import type { StatsStore } from './store/stats-store.js';
import { StatsAdminService } from './stats-admin.service.js';
import { createClusterStats } from './vod-stats.cluster.js';
import type { VodStatsDeps } from './vod-stats.deps.js';
import { createEmbeddedStats } from './vod-stats.embedded.js';
import { VodStatsService } from './vod-stats.service.js';
import { registerAdmissionMetrics } from './vod-stats.metrics.js';

/**
 * Everything VOD statistics runs, over the backends of the deployment mode (embedded: memory
 * store + file journal, vod-stats.embedded.ts; cluster: Redis store + PostgreSQL journal,
 * vod-stats.cluster.ts): ingest, the queries, the admin rebuild, their background work.
 */
export interface VodStats {
  ingest: EventIngest;
  store: StatsStore;
  /** Rebuilding the shared statistics from the journal: cluster mode only. */
  rebuild: StatsRebuild | undefined;
  /**
   * Embedded: restores from snapshot + journal on start, prunes every minute, snapshots on stop.
   * Cluster: rebuilds Redis from the journal on start if it holds no statistics, drains ingest on stop.
   */
  work: BackgroundWork;
  service: VodStatsService;
  /** The admin API's statistics rebuild (refused in the embedded mode). */
  admin: StatsAdminService;
  /** Ingest bytes in flight, bounded (PLAYLINE_INGEST_MAX_BYTES_IN_FLIGHT). */
  admission: IngestAdmission;
}

/** Wires VOD statistics over the backends of the deployment mode. */
export function createVodStats(deps: VodStatsDeps): VodStats {
  const backend: Omit<VodStats, 'service' | 'admin' | 'admission'> = deps.cluster ? createClusterStats(deps, deps.cluster) : createEmbeddedStats(deps);
  const admission = new IngestAdmission(deps.config.ingestMaxBytesInFlight);
  registerAdmissionMetrics(deps.metrics.registry, admission);
  return { ...backend, service: new VodStatsService(backend.store, deps.clock), admin: new StatsAdminService(backend.rebuild), admission };
}
