import type { Clock } from './platform/clock.js';
import { systemClock } from './platform/clock.js';
import type { Config } from './platform/config.js';
import { openStorage, type Storage } from './platform/db/database.js';
import { randomIds, type IdGenerator } from './platform/ids.js';
import { SecretBox, loadSecretKey } from './platform/secret-box.js';
import { checkSecretKey } from './platform/secret-key-check.js';
import { StorageHealth } from './platform/db/storage-health.js';
import { Authenticator } from './platform/auth/authenticator.js';
import { KeyRing } from './platform/auth/key-ring.js';
import { Metrics } from './platform/http/metrics.js';
import { WorkspaceService } from './modules/workspaces/workspaces.service.js';
import { discardErrorReports, type ErrorReportSink } from './platform/error-report-sink.js';
import { createErrorReporting, type ErrorReporting } from './modules/error-reporting/error-reporting.module.js';
import { createManagedSlicers, type ManagedSlicers } from './modules/managed-slicers/managed-slicers.module.js';
import { createSyndicationModule, type SyndicationModule, type SyndicationModuleDeps } from './modules/syndication/syndication.module.js';
import { createVodStats, type VodStats } from './modules/vod-stats/vod-stats.module.js';
import { createPlaybackEdge, type PlaybackEdge } from './modules/playback-edge/playback-edge.module.js';
import { createCluster, createClusterStats, type Cluster } from './modules/cluster/cluster.module.js';
import { callbackLinkOf } from './modules/cluster/callback-link.js';
import { ClusterAdminService } from './modules/cluster/cluster-admin.service.js';

/** Background work a module runs while the server is up (journals, dispatchers, task runners). */
export interface BackgroundWork {
  name: string;
  start(): Promise<void>;
  /** Finish or abandon cleanly; called in reverse start order on shutdown. */
  stop(): Promise<void>;
}

/**
 * Everything the app needs, built from configuration: storage, the secret box, services.
 * Modules add their services here. `close()` stops background work and closes storage.
 */
export interface Runtime {
  config: Config;
  clock: Clock;
  ids: IdGenerator;
  storage: Storage;
  /** Whether writes can be made (a full disk makes the instance not ready until space returns). */
  storageHealth: StorageHealth;
  box: SecretBox;
  metrics: Metrics;
  keyRing: KeyRing;
  authenticator: Authenticator;
  workspaces: WorkspaceService;
  /** Where accepted playback errors go (the Error Reporting dispatcher once wired). */
  errorReports: ErrorReportSink;
  /** Error Reporting: callback settings service, dispatcher, client. */
  errorReporting: ErrorReporting;
  /** Managed slicers: service and the task runner that carries out their tasks. */
  managedSlicers: ManagedSlicers;
  /** Publishing targets, schedules, regions and clipping profiles. */
  syndication: SyndicationModule;
  /** VOD statistics: durable event ingest (journal + in-memory store) and the statistics queries. */
  vodStats: VodStats;
  /** Playback edge: signed /play URLs, the playback catalogue; its events go through statistics ingest. */
  playbackEdge: PlaybackEdge;
  /** Cluster mode (PostgreSQL + Redis): shared Redis connections and the change feed; undefined when embedded. */
  cluster: Cluster | undefined;
  /** Cluster membership and the statistics rebuild (admin API, CLI). */
  clusterAdmin: ClusterAdminService;
  /** Starts background work (journals, dispatchers, task runners); the server calls it once. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface RuntimeOverrides {
  clock?: Clock;
  ids?: IdGenerator;
  storage?: Storage;
  /** PostgreSQL schema for storage (tests isolate themselves in one). */
  pgSchema?: string;
  processMetrics?: boolean;
  /** Replaces side effects of the publishing module (tests). */
  syndication?: Partial<Pick<SyndicationModuleDeps, 'publisher' | 'checkAddress' | 'probeCa'>>;
}

export async function createRuntime(config: Config, overrides: RuntimeOverrides = {}): Promise<Runtime> {
  const clock = overrides.clock ?? systemClock;
  const ids = overrides.ids ?? randomIds;
  const secretKey = loadSecretKey(config.secretKey, config.dataDir);
  const box = new SecretBox(secretKey);
  const storage =
    overrides.storage ??
    (await openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...(overrides.pgSchema ? { pgSchema: overrides.pgSchema } : {}) }));
  const ownsStorage = overrides.storage === undefined;
  try {
    await checkSecretKey(storage.db, secretKey, box, clock.now());
  } catch (err) {
    if (ownsStorage) await storage.close();
    throw err;
  }
  const storageHealth = new StorageHealth(() => storage.probeWrite(), clock);
  const metrics = new Metrics({ processMetrics: overrides.processMetrics ?? false });
  const cluster = config.redisUrl ? createCluster({ config, clock, storage }) : undefined;
  const workspaces = new WorkspaceService({ db: storage.db, box, clock, ids });
  const keyRing = new KeyRing((owner) => workspaces.loadSigningKeys(owner), clock);
  const authenticator = new Authenticator({ keys: keyRing, clock, toleranceS: config.timestampToleranceS });
  // Cluster mode: settings changes and pauses travel over the change feed; the database check is the slow safety net.
  const errorReporting = createErrorReporting({ config, clock, ids, storage, box, metrics }, cluster ? { cluster: callbackLinkOf(cluster.feed), pollMs: 5_000 } : {});
  const managedSlicers = createManagedSlicers({ config, clock, ids, storage });
  const syndication = createSyndicationModule({ db: storage.db, box, clock, ids, config, ...overrides.syndication });
  // Accepted error events go to whatever sink the runtime holds when they arrive.
  const errorReports = () => runtime.errorReports;
  // Cluster mode: PostgreSQL journal + Redis statistics, one callback rate share per live instance.
  const clusterStats = cluster && createClusterStats(cluster, { metrics, errorReports, onMembers: (alive) => errorReporting.dispatcher.setRateShare(1 / alive) });
  const vodStats = clusterStats ?? createVodStats({ config, clock, metrics, errorReports });
  const playbackEdge = createPlaybackEdge({
    config, clock, ids, storage, box, metrics,
    signingKeys: (owner) => keyRing.get(owner),
    ingest: (body, kind, auth) => vodStats.ingest.ingest(body, kind, auth),
  });

  const background: BackgroundWork[] = [];
  const started: BackgroundWork[] = [];

  const runtime: Runtime = {
    config,
    clock,
    ids,
    storage,
    storageHealth,
    box,
    metrics,
    keyRing,
    authenticator,
    workspaces,
    errorReports: discardErrorReports,
    errorReporting,
    managedSlicers,
    syndication,
    vodStats,
    playbackEdge,
    cluster,
    clusterAdmin: new ClusterAdminService(cluster && clusterStats ? { cluster, stats: clusterStats } : undefined),
    async start() {
      for (const work of background) {
        await work.start();
        started.push(work);
      }
    },
    async close() {
      for (const work of started.reverse()) await work.stop();
      started.length = 0;
      if (ownsStorage) await storage.close();
    },
  };

  // Modules, one block each: create services, add them to the runtime, queue background work.

  // Cluster mode: Redis connections first (everything after may use them), closed last.
  if (cluster) background.push(cluster.connection);

  // Error Reporting: accepted error events go to the callback dispatcher (submit never waits).
  runtime.errorReports = errorReporting.dispatcher;
  background.push(errorReporting.background);

  // Managed slicers: the task runner resumes interrupted tasks on start, stops gracefully.
  background.push(managedSlicers.work);

  // VOD statistics: restore from snapshot + journal on start, prune every minute, snapshot on stop
  // (cluster mode: join the cluster, rebuilding Redis from the journal if it holds no statistics).
  background.push(vodStats.work);

  // Playback edge: after statistics, so it stops first and hands over its last events.
  background.push(playbackEdge.work);

  return runtime;
}
