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
import { vodStatsRoutes } from './vod-stats.routes.js';
import { DeletedWorkspaceSweep } from './deleted-workspace-sweep.js';
import type { ModuleParts } from '../../platform/module-parts.js';

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
  parts: ModuleParts;
}

/** Wires VOD statistics over the backends of the deployment mode. */
export function createVodStats(deps: VodStatsDeps): VodStats {
  const backend: Omit<VodStats, 'service' | 'admin' | 'admission' | 'parts'> = deps.cluster ? createClusterStats(deps, deps.cluster) : createEmbeddedStats(deps);
  const { ingest, store } = backend;
  const admission = new IngestAdmission(deps.config.ingestMaxBytesInFlight);
  registerAdmissionMetrics(deps.metrics.registry, admission);
  const service = new VodStatsService(store, deps.clock);
  const admin = new StatsAdminService(backend.rebuild);
  // Deleted workspaces' statistics are swept once restored (before the server listens) and every
  // minute, wherever they came back from.
  const sweep = new DeletedWorkspaceSweep({
    store,
    existing: (ids) => deps.existingWorkspaces(ids),
    clock: deps.clock,
    onError: (err) => deps.log.error({ err }, "sweep of deleted workspaces' statistics failed"),
  });
  return {
    ...backend,
    service,
    admin,
    admission,
    parts: {
      name: 'vod_stats',
      apiRoutes: (api) => vodStatsRoutes(api, { vodStats: { ingest, service, admin, admission } }),
      work: [backend.work, sweep],
      // Statistics live in the store (memory or Redis), not in rows; the journal's batches that
      // name the workspace are erased again by the sweep after a restore or rebuild.
      workspaceData: [{ name: 'statistics', forget: (owner) => store.eraseOwner(owner) }],
    },
  };
}
