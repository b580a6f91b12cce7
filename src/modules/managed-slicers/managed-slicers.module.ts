import { hostname } from 'node:os';
import type { RecordingSink } from './live-recorder.js';
import type { OperationalEventSink } from '../../platform/operational-events.js';
import type { Clock } from '../../platform/clock.js';
import { listSetting, mediaMemoryLimitBytesOf, type Config, type DeploymentMode } from '../../platform/config.js';
import { memoryLimitedRunner } from '../../platform/media/media-process.js';
import { AppError } from '../../platform/errors.js';
import type { Storage } from '../../platform/db/database.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { BackgroundWork } from '../../platform/background-work.js';
import type { Metrics } from '../../platform/http/metrics.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import type { MediaTools } from '../../platform/media/media-tools.js';
import { restartSettingsOf } from '../../platform/media/supervision-policy.js';
import type { ModuleParts } from '../../platform/module-parts.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { FfmpegSlicerProvisioner } from './ffmpeg-provisioner.js';
import { IngestAdmission } from './live/ingest-admission.js';
import { liveRecording, liveWebhooks, windowIndexKeeper } from './live/consumers.js';
import { HlsPushReceiver } from './hls-push.js';
import { BytesInFlight } from '../../platform/http/bytes-in-flight.js';
import { SlicerHosting } from './slicer-hosting.js';
import { SlicerHostRepository } from './slicer-hosts.repository.js';
import { parsePortRange } from './ingest-endpoint.js';
import { registerPushMetrics, registerSlicerMetrics } from './managed-slicers.metrics.js';
import { ManagedSlicerService } from './managed-slicers.service.js';
import { SlicerRepository, countWorkspaceSlicers, deleteWorkspaceSlicers, workspacesWithSlicers } from './managed-slicers.repository.js';
import { LiveInputQuota, LiveStorageMeter, LiveStorageRoom } from './live-storage.js';
import type { Quotas } from '../../platform/quota/quotas.js';
import { managedSlicerRoutes } from './managed-slicers.routes.js';
import { hlsPushRoutes } from './hls-push.routes.js';
import { SlicerTaskQueue } from './task-queue.repository.js';
import { SimulatedSlicerProvisioner, type ProvisionRequest, type SlicerProvisioner } from './provisioner.js';
import { SlicerStreamKeys } from './stream-key.js';
import { SlicerTaskRunner, type RunnerLog } from './task-runner.js';

export interface ManagedSlicersDeps {
  storage: Storage;
  clock: Clock;
  ids: IdGenerator;
  config: Config;
  mode: DeploymentMode;
  /** Replaces the provisioner PLAYLINE_SLICER_PROVISIONER chooses (tests). */
  provisioner?: SlicerProvisioner;
  /** ffmpeg as the runtime found it at start-up (undefined before). */
  mediaTools: () => MediaTools | undefined;
  metrics?: Metrics;
  /** Seals the slicers' stream keys; derives the key of hls push ingest tokens. */
  box: SecretBox;
  /** The module's logger (a child of the runtime's root). */
  log: RunnerLog;
  /** The workspaces' quotas: slicers per workspace; live folders count in the storage quota. */
  quotas: Quotas;
  /** Operational events (live.started, live.ended, recording.ready) for webhooks. */
  events: OperationalEventSink;
  /** Where recorded live events go: the asset library (it starts after this module, so each live event asks it whether it takes recordings as the event starts). */
  recordings: RecordingSink;
}

export interface ManagedSlicers {
  service: ManagedSlicerService;
  runner: SlicerTaskRunner;
  /** The ffmpeg provisioner once start chose it; undefined with the simulated one. */
  live(): FfmpegSlicerProvisioner | undefined;
  /** Takes what encoders push to `hls` slicers (`/ingest/hls/...`). */
  hlsPush: HlsPushReceiver;
  /** Who may publish to which live event, for every ingest protocol (its refusals are counted on /metrics). */
  admission: IngestAdmission;
  /** The port the server listens on, once it does: `hls` ingest URLs name it. */
  listening(port: number): void;
  /** Starts the task runner (resuming interrupted tasks) and stops it gracefully. */
  work: BackgroundWork;
  parts: ModuleParts;
}

/** The lease owner name of this process: unique, and readable in the database. */
const leaseOwner = (ids: IdGenerator): string => `${hostname()}:${process.pid}:${ids.hex().slice(0, 8)}`;

/** The host named in ingest URLs: PLAYLINE_PUBLIC_HOST, else the bind host unless it binds every interface. */
export const publicHostOf = (config: Pick<Config, 'publicHost' | 'host'>): string =>
  config.publicHost ?? (config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host);

/** The interface ingest listeners bind: PLAYLINE_SLICER_BIND_HOST, else the API's (exposed no wider than the API unless the operator says so). */
const slicerBindHostOf = (config: Pick<Config, 'slicerBindHost' | 'host'>): string => config.slicerBindHost ?? config.host;

const urlHost = (host: string): string => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/** Wires the managed-slicers module: repositories (slicers, task queue), service, provisioner and task runner. */
export function createManagedSlicers(deps: ManagedSlicersDeps): ManagedSlicers {
  const { storage, clock, ids, config, log } = deps;
  const mediaRoot = mediaRootOf(config);
  let apiPort = config.port;
  const repository = new SlicerRepository(storage.db, storage.engine);
  const streamKeys = new SlicerStreamKeys(deps.box, repository);
  const simulated = new SimulatedSlicerProvisioner({ clock, durationMs: config.slicerProvisionMs, failureRate: config.slicerFailureRate });
  // Why slicers cannot run here (no ffmpeg, and simulated slicers not chosen), once start looked.
  let missing: string | undefined;
  // Chosen on start, once the look for ffmpeg is over; tasks only run after that.
  let chosen: SlicerProvisioner = deps.provisioner ?? simulated;
  let ffmpeg: FfmpegSlicerProvisioner | undefined;
  const provisioner: SlicerProvisioner = {
    create: (r: ProvisionRequest) => chosen.create(r),
    update: (r: ProvisionRequest) => chosen.update(r),
    restart: (r: ProvisionRequest) => chosen.restart(r),
    delete: (r: ProvisionRequest) => chosen.delete(r),
  };
  const admission = new IngestAdmission({ clock, pauseMs: config.ingestFailurePauseMs, log, ...(deps.metrics ? { registry: deps.metrics.registry } : {}) });
  const metrics = deps.metrics ? registerSlicerMetrics(deps.metrics.registry, () => ffmpeg?.statuses() ?? []) : undefined;
  // Embedded mode: one process per database, so on start it takes back every interrupted
  // task at once, and only its own enqueues create work (no idle polling). Cluster mode: tasks
  // of a dead instance are taken over when their lease expires; idle runners poll.
  const embedded = deps.mode === 'embedded';
  const ownerId = leaseOwner(ids);
  let hosting: SlicerHosting | undefined;
  const runner = new SlicerTaskRunner({
    store: new SlicerTaskQueue(storage.db, storage.engine),
    provisioner,
    clock,
    log,
    ownerId,
    streamKeyOf: (slicerId) => streamKeys.keyOfSlicer(slicerId),
    exclusive: embedded,
    pollMs: embedded ? null : 1_000,
    leaseMs: config.slicerLeaseMs,
  });
  const service = new ManagedSlicerService({
    store: repository,
    streamKeys,
    clock,
    ids,
    regions: listSetting(config.regions),
    maxDvrWindowS: config.liveDvrWindowS,
    onTaskEnqueued: () => runner.claimNow(),
    maxSlicersPerWorkspace: deps.quotas.limits.slicers,
    // The cap counts processes: simulated slicers run none.
    maxSlicers: () => (ffmpeg ? config.maxSlicers : undefined),
    countSlicers: () => repository.countAll(),
    liveStatus: (slicerId) => ffmpeg?.status(slicerId),
    assertRunnable: () => {
      if (missing !== undefined) throw new AppError('media_tools_missing', `Managed slicers run ffmpeg, which is not available on this server: ${missing}`);
    },
  });

  const chooseProvisioner = async (): Promise<void> => {
    if (deps.provisioner || config.slicerProvisioner === 'simulated') return;
    const tools = deps.mediaTools();
    if (tools === undefined) throw new Error('managed slicers started before the media tools were looked for');
    if (!tools.available) {
      // A slicer that receives nothing is never made without being asked for: simulated slicers
      // are PLAYLINE_SLICER_PROVISIONER=simulated only. Creates are refused (503), tasks fail.
      missing = tools.reason;
      const reason = `ffmpeg is not available on this server: ${tools.reason}`;
      const refuse = () => Promise.resolve({ kind: 'failed' as const, reason });
      // Nothing runs without ffmpeg, so a delete has nothing to stop.
      chosen = { create: refuse, update: refuse, restart: refuse, delete: () => Promise.resolve({ kind: 'succeeded', ingestUrl: null }) };
      log.error({ reason: tools.reason }, 'ffmpeg is missing: managed slicers cannot run (creates answer 503 media_tools_missing; PLAYLINE_SLICER_PROVISIONER=simulated runs simulated ones)');
      return;
    }
    const run = memoryLimitedRunner(mediaMemoryLimitBytesOf(config));
    ffmpeg = new FfmpegSlicerProvisioner({
      ffmpeg: tools.ffmpeg,
      mediaRoot,
      bindHost: slicerBindHostOf(config),
      publicHost: publicHostOf(config),
      ports: parsePortRange(config.slicerPorts),
      windowSegments: config.slicerWindowSegments,
      dvrWindowS: config.liveDvrWindowS,
      reconnectGraceMs: config.liveReconnectGraceMs,
      preset: 'veryfast',
      clock,
      log,
      restart: restartSettingsOf(config),
      stallMs: config.slicerStallMs,
      ristLimits: { idleMs: config.ristIdleMs, candidatePacketsPerSecond: config.ristCandidatePps, derivationsPerSecond: config.ristKeyDerivationsPerS, maxPeers: config.ristMaxSenders },
      run,
      ...(metrics ? { onRestart: () => metrics.restarted() } : {}),
      hlsPushBase: () => `http://${urlHost(publicHostOf(config))}:${apiPort}`,
      admission,
      // What lives with each live event; a new consumer is one more line here.
      consumers: [
        windowIndexKeeper(log),
        liveWebhooks(deps.events),
        liveRecording({ mediaRoot, clock, ffmpeg: tools.ffmpeg, run, log, sink: deps.recordings, mayRecord: (owner) => deps.quotas.storage.hasRoom(owner), events: deps.events }),
      ],
      dvrMayGrow: (owner) => liveRoom.mayGrow(owner),
    });
    hosting = new SlicerHosting({ hosts: new SlicerHostRepository(storage.db), provisioner: ffmpeg, clock, log, owner: ownerId, streamKeyOf: (slicer) => streamKeys.keyOf(slicer), leaseMs: config.slicerLeaseMs, exclusive: embedded });
    chosen = hosting;
    // Embedded mode owns every slicer of its database: processes a killed predecessor left are
    // ended first. (In cluster mode each is ended when its slicer is taken over on its host.)
    if (embedded) {
      const killed = await ffmpeg.sweepOrphans();
      if (killed > 0) log.warn({ processes: killed }, 'ended slicer processes left by the previous run');
    }
    // Slicers that should run and run nowhere (after a restart; a dead instance's) start here.
    await hosting.start();
  };

  const { quotas } = deps;
  const liveStorage = new LiveStorageMeter(mediaRoot, clock);
  quotas.storage.addSource(liveStorage);
  // Live windows count against the storage quota: at the quota a window trims its DVR tail (the live event goes on).
  const liveRoom = new LiveStorageRoom(async (owner) => {
    liveStorage.forget(owner);
    return (await quotas.storage.use(owner)).total;
  }, quotas.storage.limitBytes, clock, (err, owner) => log.warn({ err, owner }, 'could not measure the workspace\'s storage for its live windows'));
  quotas.usage.register({
    name: 'managed_slicers',
    counts: async (owner) => ({ slicers: await countWorkspaceSlicers(storage.db, owner) }),
    workspacesAtLimit: async (limits) => ({ slicers: await workspacesWithSlicers(storage.db, limits.slicers) }),
  });
  const pushBytes = new BytesInFlight(config.hlsPushMaxBytesInFlight);
  if (deps.metrics) registerPushMetrics(deps.metrics.registry, pushBytes);
  const liveInput = new LiveInputQuota({ maxFiles: config.hlsPushMaxFiles, maxBytes: config.hlsPushMaxFolderBytes }, quotas.storage, liveStorage);
  const hlsPush = new HlsPushReceiver(
    mediaRoot,
    (owner, slicerId, token, remoteAddress) => admission.admit({ protocol: 'hls', owner, slicerId, presentedKey: token, remoteAddress }),
    pushBytes,
    liveInput,
  );
  const work: BackgroundWork = {
    name: 'managed-slicer task runner',
    start: async () => {
      await chooseProvisioner();
      await runner.start();
    },
    stop: async () => {
      await runner.stop();
      await hosting?.stop();
      await ffmpeg?.stopAll();
    },
  };
  return {
    service,
    runner,
    live: () => ffmpeg,
    hlsPush,
    admission,
    listening: (port) => {
      apiPort = port;
    },
    work,
    parts: {
      name: 'managed_slicers',
      apiRoutes: (api) => managedSlicerRoutes(api, { managedSlicers: service }),
      rootRoutes: (root) => hlsPushRoutes(root, hlsPush),
      work: [work],
      workspaceData: [
        // Slicer processes stop and their live output goes before the rows.
        { name: 'managed_slicers', stop: async (owner) => ffmpeg?.stopWorkspace(owner), deleteRows: deleteWorkspaceSlicers },
      ],
    },
  };
}
