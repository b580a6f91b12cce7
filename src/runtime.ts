import type { BackgroundWork } from './platform/background-work.js';
import type { Clock } from './platform/clock.js';
import { systemClock } from './platform/clock.js';
import { deploymentModeOf, type Config, type DeploymentMode } from './platform/config.js';
import { openStorage, type Storage } from './platform/db/database.js';
import { randomIds, type IdGenerator } from './platform/ids.js';
import { SecretBox, loadSecretKey } from './platform/secret-box.js';
import { checkSecretKey } from './platform/secret-key-check.js';
import { StorageHealth } from './platform/db/storage-health.js';
import { Authenticator } from './platform/auth/authenticator.js';
import { KeyRing } from './platform/auth/key-ring.js';
import { Metrics } from './platform/http/metrics.js';
import { WorkspaceService } from './modules/workspaces/workspaces.service.js';
import { IngestGrantService } from './modules/workspaces/ingest-grants.service.js';
import type { ErrorReportSink } from './platform/error-report-sink.js';
import { createErrorReporting, type ErrorReporting } from './modules/error-reporting/error-reporting.module.js';
import { createManagedSlicers, type ManagedSlicers, type ManagedSlicersDeps } from './modules/managed-slicers/managed-slicers.module.js';
import { createSyndicationModule, type SyndicationModule, type SyndicationModuleDeps } from './modules/syndication/syndication.module.js';
import { createVodStats, type VodStats } from './modules/vod-stats/vod-stats.module.js';
import { createPlaybackEdge, type PlaybackEdge, type PlaybackEdgeOverrides } from './modules/playback-edge/playback-edge.module.js';
import { createCluster, newInstanceId, type Cluster } from './platform/cluster/cluster.js';
import { createLogger, flushLogger, type Logger } from './platform/logger.js';
import type { DestinationStream } from 'pino';
import { callbackLinkOf } from './modules/error-reporting/callback-link.js';
import { ClusterStatusService } from './platform/cluster/cluster-status.service.js';
import { createAssets, type Assets, type AssetsDeps } from './modules/assets/assets.module.js';
import { WorkspaceDeletion } from './modules/workspaces/workspace-deletion.js';
import { existingWorkspaceIds } from './modules/workspaces/workspaces.repository.js';
import { DeletedWorkspaceSweep } from './modules/vod-stats/deleted-workspace-sweep.js';
import { workspaceDataParts } from './workspace-data.js';

/**
 * Everything the app needs, built from configuration: storage, the secret box, services.
 * Modules add their services here. `close()` stops background work and closes storage.
 */
export interface Runtime {
  config: Config;
  /** Embedded (SQLite + files) or cluster (PostgreSQL + Redis): decided here, once, from the config. */
  mode: DeploymentMode;
  clock: Clock;
  ids: IdGenerator;
  /** The one root logger (level, redaction and base fields from the config); Fastify and every module log through it. */
  log: Logger;
  storage: Storage;
  /** Whether writes can be made (a full disk makes the instance not ready until space returns). */
  storageHealth: StorageHealth;
  box: SecretBox;
  metrics: Metrics;
  keyRing: KeyRing;
  authenticator: Authenticator;
  workspaces: WorkspaceService;
  /** Which workspaces an ingest key may submit events for (admin API, CLI; read by statistics ingest). */
  ingestGrants: IngestGrantService;
  /** Where accepted playback errors go: the Error Reporting dispatcher (or what a test wrapped it in). */
  readonly errorReports: ErrorReportSink;
  /** Deletes a workspace with everything every module holds for it (see workspace-data.ts). */
  workspaceDeletion: WorkspaceDeletion;
  /** Error Reporting: callback settings service, dispatcher, client. */
  errorReporting: ErrorReporting;
  /** Managed slicers: service and the task runner that carries out their tasks. */
  managedSlicers: ManagedSlicers;
  /** Publishing targets, schedules, regions and clipping profiles. */
  syndication: SyndicationModule;
  /** VOD statistics: durable event ingest (journal + store of the mode's backends), the queries, the admin rebuild. */
  vodStats: VodStats;
  /** Playback edge: signed /play URLs, the playback catalogue; its events go through statistics ingest. */
  readonly playbackEdge: PlaybackEdge;
  /** The asset library: uploads packaged to HLS by ffmpeg in background jobs (503 without ffmpeg). */
  assets: Assets;
  /** Cluster mode (PostgreSQL + Redis): shared Redis connections, the change feed, the membership; undefined when embedded. */
  cluster: Cluster | undefined;
  /** The deployment as the admin API and CLI show it: mode, instances, shared statistics. */
  clusterStatus: ClusterStatusService;
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
  /** Where log lines go instead of stdout (tests capture them). */
  logDestination?: DestinationStream;
  /** Replaces side effects of the publishing module (tests). */
  syndication?: Partial<Pick<SyndicationModuleDeps, 'publisher' | 'checkAddress' | 'probeCa'>>;
  /** Replaces side effects of the playback edge (tests: stopwatch, ad decisions, an event recorder). */
  playbackEdge?: PlaybackEdgeOverrides;
  /** Replaces side effects of managed slicers (tests: a provisioner, the look for ffmpeg). */
  managedSlicers?: Pick<ManagedSlicersDeps, 'provisioner' | 'discover'>;
  /** Replaces side effects of the asset library (tests: a packager, the look for ffmpeg). */
  assets?: Pick<AssetsDeps, 'packager' | 'discover'>;
  /** Wraps or replaces where accepted playback errors go; given the callback dispatcher (tests record reports). */
  errorReports?: (dispatcher: ErrorReportSink) => ErrorReportSink;
  /** Cluster mode: give up connecting to Redis after this long (CLI commands). */
  clusterConnectTimeoutMs?: number;
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
  const mode = deploymentModeOf(config);
  // Cluster mode: every line names the instance that wrote it (the id the journal and registry use).
  const instanceId = mode === 'cluster' ? newInstanceId() : undefined;
  const log = createLogger({
    level: config.logLevel,
    ...(instanceId ? { bindings: { instance: instanceId } } : {}),
    ...(overrides.logDestination ? { destination: overrides.logDestination } : {}),
  });
  const moduleLog = (module: string) => log.child({ module });
  const cluster = instanceId ? createCluster({ config, clock, storage, instanceId, log: moduleLog('cluster'), ...(overrides.clusterConnectTimeoutMs !== undefined ? { connectTimeoutMs: overrides.clusterConnectTimeoutMs } : {}) }) : undefined;
  const workspaces = new WorkspaceService({ db: storage.db, box, clock, ids });
  const keyRing = new KeyRing((owner) => workspaces.loadSigningKeys(owner), clock);
  const ingestGrants = new IngestGrantService({ db: storage.db, clock });
  const authenticator = new Authenticator({ keys: keyRing, clock, toleranceS: config.timestampToleranceS });
  // Cluster mode: settings changes and pauses travel over the change feed; the database check is the slow safety net.
  const errorReporting = createErrorReporting({ config, clock, ids, storage, box, metrics, log: moduleLog('error-reporting') }, cluster ? { cluster: callbackLinkOf(cluster.feed), pollMs: 5_000 } : {});
  const managedSlicers = createManagedSlicers({ config, mode, clock, ids, storage, metrics, box, log: moduleLog('managed-slicers'), ...overrides.managedSlicers });
  const syndication = createSyndicationModule({
    db: storage.db, box, clock, ids, config,
    log: moduleLog('syndication'),
    registry: metrics.registry,
    // Cluster mode: a push runs on the instance that started it (a survivor takes a dead one's over); resuming everywhere would push twice.
    resumeOnStart: mode === 'embedded',
    ...(cluster && instanceId ? { cluster: { instanceId, membership: cluster.membership } } : {}),
    // The asset library looks for ffmpeg at start; publishing uses what it found.
    ffmpeg: () => {
      const tools = assets.tools();
      return tools?.available ? tools.ffmpeg : undefined;
    },
    ...overrides.syndication,
  });
  // Cluster mode: each live instance sends its share of every callback endpoint's rate.
  cluster?.membership.onMembers((alive) => errorReporting.dispatcher.setRateShare(1 / alive));
  // Accepted error events go to the callback dispatcher: built first, handed to the producers.
  const errorReports = overrides.errorReports ? overrides.errorReports(errorReporting.dispatcher) : errorReporting.dispatcher;
  const vodStats = createVodStats({ config, clock, storage, metrics, errorReports, cluster, ingestOwners: ingestGrants, log: moduleLog('vod-stats') });
  const playbackEdge = createPlaybackEdge({
    config, clock, ids, storage, box, metrics,
    log: moduleLog('playback-edge'),
    signingKeys: (owner) => keyRing.get(owner),
    ingest: vodStats.ingest,
    ...(cluster ? { cluster: { redis: cluster.redis, prefix: config.redisPrefix } } : {}),
  }, overrides.playbackEdge);

  const assets = createAssets({ config, mode, clock, ids, storage, metrics, log: moduleLog('assets'), ...overrides.assets });

  const background: BackgroundWork[] = [];
  const started: BackgroundWork[] = [];

  const runtime: Runtime = {
    config,
    mode,
    clock,
    ids,
    log,
    storage,
    storageHealth,
    box,
    metrics,
    keyRing,
    authenticator,
    workspaces,
    ingestGrants,
    errorReports,
    workspaceDeletion: new WorkspaceDeletion(storage.db),
    errorReporting,
    managedSlicers,
    syndication,
    vodStats,
    playbackEdge,
    assets,
    cluster,
    clusterStatus: new ClusterStatusService(cluster && vodStats.rebuild ? { cluster, stats: vodStats.rebuild } : undefined),
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
      await flushLogger(log);
    },
  };

  // Modules, one block each: create services, add them to the runtime, queue background work.

  // Cluster mode: Redis connections first (everything after may use them), closed last; then
  // the instance joins the registry (it leaves last, after statistics drained their held batches).
  if (cluster) background.push(cluster.connection, cluster.membership.presence);

  // Error Reporting: loads the callbacks, follows their changes; its dispatcher never waits.
  background.push(errorReporting.background);

  // Managed slicers: the task runner resumes interrupted tasks on start, stops gracefully.
  background.push(managedSlicers.work);

  // Asset library: looks for ffmpeg, then packages uploads (interrupted jobs again from scratch);
  // stopping gives running jobs back to the queue.
  background.push(assets.work);


  // Publishing, after the asset library found ffmpeg: started schedules push again (embedded
  // mode); running pushes (ffmpeg processes) end on shutdown.
  background.push(syndication.work);

  // VOD statistics: restore from snapshot + journal on start, prune every minute, snapshot on stop
  // (cluster mode: rebuild Redis from the journal if it holds no statistics; drain ingest on stop).
  background.push(vodStats.work);

  // Workspace deletion: every module's part; the statistics of deleted workspaces are swept once
  // restored (before the server listens) and every minute, wherever they came back from.
  for (const part of workspaceDataParts(runtime)) runtime.workspaceDeletion.register(part);
  background.push(new DeletedWorkspaceSweep({
    store: vodStats.store,
    existing: (ids) => existingWorkspaceIds(storage.db, ids),
    clock,
    onError: (err) => moduleLog('workspaces').error({ err }, "sweep of deleted workspaces' statistics failed"),
  }));

  // Cluster mode: heartbeats, takeovers and chores once the modules run; stopped before them.
  if (cluster) background.push(cluster.membership.housekeeping);

  // Playback edge: after statistics, so it stops first and hands over its last events.
  background.push(playbackEdge.work);

  return runtime;
}
