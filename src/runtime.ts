import type { BackgroundWork } from './platform/background-work.js';
import type { Clock } from './platform/clock.js';
import { systemClock } from './platform/clock.js';
import { deploymentModeOf, type Config, type DeploymentMode } from './platform/config.js';
import { openStorage, type Storage } from './platform/db/database.js';
import { randomIds, type IdGenerator } from './platform/ids.js';
import { SecretBox, loadSecretKey } from './platform/secret-box.js';
import { checkSecretKey } from './platform/secret-key-check.js';
import { StorageHealth } from './platform/db/storage-health.js';
import type { Authenticator } from './platform/auth/authenticator.js';
import type { KeyRing } from './platform/auth/key-ring.js';
import { Metrics } from './platform/http/metrics.js';
import type { WorkspaceService } from './modules/workspaces/workspaces.service.js';
import type { IngestGrantService } from './modules/workspaces/ingest-grants.service.js';
import { createWorkspaces } from './modules/workspaces/workspaces.module.js';
import type { ErrorReportSink } from './platform/error-report-sink.js';
import { createErrorReporting, type ErrorReporting } from './modules/error-reporting/error-reporting.module.js';
import type { FinishedRecording, RecordingSink } from './modules/managed-slicers/live-recorder.js';
import { createManagedSlicers, publicHostOf, type ManagedSlicers, type ManagedSlicersDeps } from './modules/managed-slicers/managed-slicers.module.js';
import { serverInfoParts } from './modules/server-info/server-info.routes.js';
import { VERSION } from './platform/version.js';
import { createSyndicationModule, type SyndicationModule, type SyndicationOverrides } from './modules/syndication/syndication.module.js';
import { createVodStats, type VodStats } from './modules/vod-stats/vod-stats.module.js';
import { createPlaybackEdge, type PlaybackEdge, type PlaybackEdgeOverrides } from './modules/playback-edge/playback-edge.module.js';
import { createCluster, newInstanceId, type Cluster } from './platform/cluster/cluster.js';
import { createLogger, flushLogger, type Logger } from './platform/logger.js';
import type { DestinationStream } from 'pino';
import { callbackLinkOf } from './modules/error-reporting/callback-link.js';
import { ClusterStatusService } from './platform/cluster/cluster-status.service.js';
import { createAssets, type Assets, type AssetsOverrides } from './modules/assets/assets.module.js';
import { Wiring, type WiringDescription } from './platform/wiring.js';
import { MemorySingleUseGuard } from './modules/playback-edge/single-use-guard.js';
import type { WorkspaceDeletion } from './modules/workspaces/workspace-deletion.js';
import type { ModuleParts } from './platform/module-parts.js';
import { mediaToolsLookup, type MediaToolPaths, type MediaTools, type MediaToolsLookup } from './platform/media/media-tools.js';
import { migrations } from './migrations.js';
import { DirectoryLock } from './platform/directory-lock.js';
import { mkdir } from 'node:fs/promises';
import { createQuotas, type Quotas } from './platform/quota/quotas.js';
import { outboundOf, type Outbound } from './platform/net/outbound.js';
import { createWebhooks, type Webhooks } from './modules/webhooks/webhooks.module.js';

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
  /** Deletes a workspace with everything every module holds for it (each module's parts.workspaceData). */
  workspaceDeletion: WorkspaceDeletion;
  /** Error Reporting: callback settings service, dispatcher, client. */
  errorReporting: ErrorReporting;
  /** Operational event webhooks: subscriptions, the event sink the producers emit to, delivery with retries. */
  webhooks: Webhooks;
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
  /** The quotas of every workspace (storage, assets, slicers, targets, schedules, pushes) and their usage. */
  quotas: Quotas;
  /** Cluster mode (PostgreSQL + Redis): shared Redis connections, the change feed, the membership; undefined when embedded. */
  cluster: Cluster | undefined;
  /** The deployment as the admin API and CLI show it: mode, instances, shared statistics. */
  clusterStatus: ClusterStatusService;
  /** ffmpeg and ffprobe, looked for at start-up (and again in the background until found), handed to the modules that run them. */
  mediaTools: MediaToolsLookup;
  /** What each module handed over (routes, background work, workspace data), in start order. */
  modules: readonly ModuleParts[];
  /** Which implementation each module's production ports got in this mode (checked: none unwired). */
  wiring: WiringDescription;
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
  syndication?: SyndicationOverrides;
  /** Replaces the outbound layer (tests: a fake resolver or a wider allow-list); production builds it from config. */
  outbound?: Outbound;
  /** Replaces side effects of the playback edge (tests: stopwatch, ad decisions, an event recorder). */
  playbackEdge?: PlaybackEdgeOverrides;
  /** Replaces side effects of managed slicers (tests: a provisioner). */
  managedSlicers?: Pick<ManagedSlicersDeps, 'provisioner'>;
  /** Replaces side effects of the asset library (tests: a packager). */
  assets?: AssetsOverrides;
  /** Replaces the look for ffmpeg and ffprobe at start-up (tests). */
  mediaTools?: (paths: MediaToolPaths) => Promise<MediaTools>;
  /** Wraps or replaces where accepted playback errors go; given the callback dispatcher (tests record reports). */
  errorReports?: (dispatcher: ErrorReportSink) => ErrorReportSink;
  /** Cluster mode: give up connecting to Redis after this long (CLI commands). */
  clusterConnectTimeoutMs?: number;
}

/** The data directory's lock, held while the server runs (`server.lock`, the holder's pid in `server.pid`). */
function dataDirectoryLock(dataDir: string): BackgroundWork {
  let lock: DirectoryLock | undefined;
  return {
    name: 'data directory lock',
    start: async () => {
      await mkdir(dataDir, { recursive: true });
      lock = DirectoryLock.acquire(dataDir, `data directory ${dataDir}`, { lock: 'server.lock', pid: 'server.pid' });
    },
    stop: async () => lock?.release(),
  };
}

export async function createRuntime(config: Config, overrides: RuntimeOverrides = {}): Promise<Runtime> {
  const clock = overrides.clock ?? systemClock;
  const ids = overrides.ids ?? randomIds;
  const secretKey = loadSecretKey(config.secretKey, config.dataDir);
  const box = new SecretBox(secretKey);
  const storage =
    overrides.storage ??
    (await openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, migrations, ...(overrides.pgSchema ? { pgSchema: overrides.pgSchema } : {}) }));
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
  if (config.callbackAllowlist.trim() !== '') log.warn('PLAYLINE_CALLBACK_ALLOWLIST (--callback-allowlist) is deprecated: its entries were added to PLAYLINE_OUTBOUND_ALLOWLIST, which covers callbacks and publishing; rename the setting');
  const cluster = instanceId ? createCluster({ config, clock, storage, instanceId, log: moduleLog('cluster'), ...(overrides.clusterConnectTimeoutMs !== undefined ? { connectTimeoutMs: overrides.clusterConnectTimeoutMs } : {}) }) : undefined;
  const quotas = createQuotas({ db: storage.db, clock, config, mode, registry: metrics.registry });
  const workspacesModule = createWorkspaces({ db: storage.db, box, clock, ids, config, usage: quotas.usage });
  const { workspaces, keyRing, ingestGrants, authenticator } = workspacesModule;
  // Looked for once at start-up; the asset library, slicers and publishing read the answer.
  const mediaTools = mediaToolsLookup({
    paths: { ffmpeg: config.ffmpegPath, ffprobe: config.ffprobePath },
    log: moduleLog('media'),
    clock,
    ...(overrides.mediaTools ? { discover: overrides.mediaTools } : {}),
  });
  const ffmpeg = (): string | undefined => {
    const tools = mediaTools.found();
    return tools?.available ? tools.ffmpeg : undefined;
  };
  // The one way out of the process: every module that connects out gets this, the guard inside it.
  const outbound = overrides.outbound ?? outboundOf(config, clock);
  // Cluster mode: settings changes and pauses travel over the change feed; the database check is the slow safety net.
  // Every production port a module gets is written in `wiring` as it is handed over; an unwired one stops the start (below).
  const wiring = new Wiring();
  const errorReporting = createErrorReporting({
    config, clock, ids, storage, box, metrics, log: moduleLog('error-reporting'),
    outbound: wiring.port('error-reporting', 'outbound', outbound, 'outbound layer'),
    cluster: cluster ? { link: wiring.port('error-reporting', 'settings link', callbackLinkOf(cluster.feed), 'change feed'), pollMs: 5_000 } : undefined,
  });
  // Operational events (asset, live, publishing state changes) to subscribed endpoints, with retries.
  const webhooks = createWebhooks({ config, mode, clock, ids, storage, box, metrics, log: moduleLog('webhooks'), outbound: wiring.port('webhooks', 'outbound', outbound, 'outbound layer') });
  const events = wiring.port('webhooks', 'event intake', webhooks.events, 'webhook deliveries');
  // Recorded live events become assets of the library, made below. The library starts after the
  // slicers (resumed slicers run before it): each live event asks it as the event starts.
  const recordings: RecordingSink = {
    unavailableReason: () => {
      const tools = assets.tools();
      if (tools === undefined) return 'the asset library has not started yet';
      return tools.available ? undefined : `the asset library is not available on this server: ${tools.reason}`;
    },
    adopt: async (r: FinishedRecording) => ({ assetId: (await assets.service.adoptRecording(r)).id }),
    // A recording counts in the asset quota as it opens; one open is kept whatever (README, Limits).
    mayAdd: (owner: string) => assets.service.hasRoomForAsset(owner),
  };
  const managedSlicers = createManagedSlicers({
    config, mode, clock, ids, storage, metrics, box, log: moduleLog('managed-slicers'), mediaTools: mediaTools.found, quotas,
    events: wiring.port('managed-slicers', 'events', events, 'webhooks'),
    recordings: wiring.port('managed-slicers', 'recordings', recordings, 'asset library'),
    ...overrides.managedSlicers,
  });
  const syndication = createSyndicationModule({
    db: storage.db, box, clock, ids, config,
    outbound: wiring.port('syndication', 'outbound', outbound, 'outbound layer'),
    log: moduleLog('syndication'),
    registry: wiring.port('syndication', 'metrics', metrics.registry, 'prometheus registry'),
    // Cluster mode: a push runs on the instance that started it (a survivor takes a dead one's over); resuming everywhere would push twice.
    resumeOnStart: wiring.port('syndication', 'resume on start', mode === 'embedded', mode === 'embedded' ? 'every started schedule' : 'none (takeover of dead instances)'),
    cluster: cluster && instanceId ? wiring.port('syndication', 'takeover', { instanceId, membership: cluster.membership }, 'cluster membership') : undefined,
    ffmpeg: wiring.port('syndication', 'ffmpeg', ffmpeg, 'media tools lookup'),
    quotas,
    events: wiring.port('syndication', 'events', events, 'webhooks'),
  }, overrides.syndication ?? {});
  // Cluster mode: each live instance sends its share of every callback endpoint's rate.
  cluster?.membership.onMembers((alive) => errorReporting.dispatcher.setRateShare(1 / alive));
  // Accepted error events go to the callback dispatcher: built first, handed to the producers.
  const errorReports = overrides.errorReports ? overrides.errorReports(errorReporting.dispatcher) : errorReporting.dispatcher;
  const vodStats = createVodStats({
    config, clock, storage, metrics, ingestOwners: ingestGrants, log: moduleLog('vod-stats'), existingWorkspaces: workspacesModule.existing,
    errorReports: wiring.port('vod-stats', 'error reports', errorReports, overrides.errorReports ? 'test wrapper of the error-reporting dispatcher' : 'error-reporting dispatcher'),
    cluster: cluster ? wiring.port('vod-stats', 'shared counters', cluster, 'redis') : undefined,
  });
  const playbackEdge = createPlaybackEdge({
    config, clock, ids, storage, box,
    log: moduleLog('playback-edge'),
    signingKeys: (owner) => keyRing.get(owner),
    ingest: wiring.port('playback-edge', 'events', vodStats.ingest, 'vod-stats ingest'),
    metrics: wiring.port('playback-edge', 'metrics', metrics, 'prometheus registry'),
    cluster: cluster ? { redis: cluster.redis, prefix: config.redisPrefix } : undefined,
  }, overrides.playbackEdge);
  // Read back from what the edge built, not from the mode: the store of its single-use claims.
  wiring.port('playback-edge', 'single-use claims', playbackEdge.pbsGuard, playbackEdge.pbsGuard instanceof MemorySingleUseGuard ? 'memory' : 'redis');

  const assets = createAssets({
    config, mode, clock, ids, storage, log: moduleLog('assets'), mediaTools: mediaTools.found, quotas,
    onMediaTools: wiring.port('assets', 'media tools found later', mediaTools.onFound, 'media tools lookup'),
    metrics: wiring.port('assets', 'metrics', metrics, 'prometheus registry'),
    events: wiring.port('assets', 'events', events, 'webhooks'),
  }, overrides.assets);
  // The start-up check: a production port left unwired stops here, before anything starts.
  try {
    wiring.check();
  } catch (err) {
    if (ownsStorage) await storage.close();
    throw err;
  }

  // The modules in start order (shutdown runs in reverse, and so do a workspace deletion's stops):
  // - Error Reporting loads the callbacks and follows their changes; its dispatcher never waits.
  // - Webhooks resume the attempts due (stopped after the producers, so their last events are stored).
  // - Managed slicers: the task runner resumes interrupted tasks; slicers that should run start.
  // - The asset library packages uploads (interrupted jobs again from scratch); stopping gives
  //   running jobs back to the queue.
  // - Publishing, after the slicers whose live windows it pushes: started schedules push again
  //   (embedded mode); running pushes end on shutdown.
  // - Statistics restore from snapshot + journal (cluster: rebuild Redis if it holds none), then
  //   sweep away deleted workspaces' statistics, before the server listens; drain on stop.
  // - The playback edge last, so it stops first and hands its last events to statistics.
  const serverInfo = serverInfoParts({
    version: VERSION, mode, publicHost: publicHostOf(config), portRange: config.slicerPorts, slicerProvisioner: config.slicerProvisioner,
    dvrWindowMaxS: config.liveDvrWindowS, reconnectGraceMs: config.liveReconnectGraceMs, outboundAllowlist: config.outboundAllowlist, mediaTools: mediaTools.found,
  });
  const modules: readonly ModuleParts[] = [
    workspacesModule.parts,
    errorReporting.parts,
    webhooks.parts,
    managedSlicers.parts,
    assets.parts,
    syndication.parts,
    vodStats.parts,
    playbackEdge.parts,
    serverInfo,
  ];
  for (const module of modules) for (const part of module.workspaceData ?? []) workspacesModule.deletion.register(part);

  const background: BackgroundWork[] = [
    // Embedded mode: one server per data directory, decided before anything else starts (a
    // second server on the same directory must not touch the first one's processes or ports).
    ...(mode === 'embedded' ? [dataDirectoryLock(config.dataDir)] : []),
    // Cluster mode: Redis connections first (everything after may use them), closed last; then
    // the instance joins the registry (it leaves last, after statistics drained their held batches).
    ...(cluster ? [cluster.connection, cluster.membership.presence] : []),
    mediaTools.work,
    quotas.work,
    ...modules.flatMap((module) => module.work ?? []),
    // Cluster mode: heartbeats, takeovers and chores once every module runs; stopped before any.
    ...(cluster ? [cluster.membership.housekeeping] : []),
  ];
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
    workspaceDeletion: workspacesModule.deletion,
    errorReporting,
    webhooks,
    managedSlicers,
    syndication,
    vodStats,
    playbackEdge,
    assets,
    quotas,
    cluster,
    clusterStatus: new ClusterStatusService(cluster && vodStats.rebuild ? { cluster, stats: vodStats.rebuild } : undefined),
    mediaTools,
    modules,
    wiring: wiring.describe(),
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

  return runtime;
}
