import { hostname } from 'node:os';
import type { OperationalEventSink } from '../../platform/operational-events.js';
import type { BackgroundWork } from '../../platform/background-work.js';
import type { Clock } from '../../platform/clock.js';
import { ConfigError, packagingLadderOf, type Config, type DeploymentMode } from '../../platform/config.js';
import type { Storage } from '../../platform/db/database.js';
import type { Metrics } from '../../platform/http/metrics.js';
import type { IdGenerator } from '../../platform/ids.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import type { MediaTools, MediaToolsLookup } from '../../platform/media/media-tools.js';
import type { ModuleParts } from '../../platform/module-parts.js';
import { AssetFiles } from './asset-files.js';
import { FfmpegPackager, packagingLimitsOf, type AssetPackager } from './asset-packager.js';
import { registerAssetMetrics } from './assets.metrics.js';
import { AssetRepository, assetStoredBytes, countWorkspaceAssets, deleteWorkspaceAssets, workspacesWithAssets } from './assets.repository.js';
import type { Quotas } from '../../platform/quota/quotas.js';
import { assetRoutes } from './assets.routes.js';
import { AssetService } from './assets.service.js';
import { PackagingRunner } from './packaging-runner.js';
import type { RunnerLog } from '../../platform/leased-work.js';

export interface AssetsDeps {
  config: Config;
  mode: DeploymentMode;
  clock: Clock;
  ids: IdGenerator;
  storage: Storage;
  metrics: Metrics;
  /** The module's logger (a child of the runtime's root). */
  log: RunnerLog & { info(obj: object, msg: string): void };
  /** ffmpeg and ffprobe as the runtime found them at start-up (undefined before). */
  mediaTools: () => MediaTools | undefined;
  /** Tells the library when a later look finds the tools the start-up look did not (a slow or busy start). */
  onMediaTools: MediaToolsLookup['onFound'];
  /** The workspaces' quotas: the library's bytes count in the storage quota, its assets in the asset quota. */
  quotas: Quotas;
  /** Operational events (asset.ready, asset.failed) for webhooks; `noOperationalEvents` where none are wanted. */
  events: OperationalEventSink;
}

/** Test seams, kept apart from the production wiring above. */
export interface AssetsOverrides {
  /** Replaces the ffmpeg packager (tests of the job lifecycle). */
  packager?: AssetPackager;
}

export interface Assets {
  service: AssetService;
  runner: PackagingRunner;
  files: AssetFiles;
  /** ffmpeg and ffprobe as found at start-up; undefined before. */
  tools(): MediaTools | undefined;
  /** Prepares the media directory and starts packaging once the media tools were found; stops it. */
  work: BackgroundWork;
  parts: ModuleParts;
}

/** Uploads left untouched this long in a shared media directory belong to a dead instance. */
const STALE_UPLOAD_MS = 60 * 60 * 1000;

/** Wires the asset library: media directory, repository, packager, runner, service, metrics. */
export function createAssets(deps: AssetsDeps, overrides: AssetsOverrides = {}): Assets {
  const { config, clock, ids, storage } = deps;
  const embedded = deps.mode === 'embedded';
  const { log } = deps;
  // Checked now, as the runtime is created: a ladder that would package unplayable assets stops the server before it listens.
  const ladder = packagingLadderOf(config);
  const files = new AssetFiles(mediaRootOf(config));
  const repository = new AssetRepository(storage.db);
  let tools: MediaTools | undefined;
  let packager: AssetPackager | undefined = overrides.packager;

  const metrics = registerAssetMetrics(deps.metrics.registry, { counts: (now) => repository.counts(now), runningHere: () => runner.runningCount() }, clock);
  const runner: PackagingRunner = new PackagingRunner({
    store: repository,
    packager: {
      package: (job) => {
        if (!packager) throw new Error('packaging started before the media tools were found');
        return packager.package(job);
      },
    },
    files,
    clock,
    log,
    ownerId: `${hostname()}:${process.pid}:${ids.hex().slice(0, 8)}`,
    // Embedded: one process per database takes back every interrupted job on start, and only
    // its own uploads create work. Cluster: jobs of a dead instance are taken over when their
    // lease expires; idle runners look for work every 2 s.
    exclusive: embedded,
    pollMs: embedded ? null : 2_000,
    concurrency: config.packagingConcurrency,
    leaseMs: config.packagingLeaseMs,
    onFailed: () => metrics.failed(),
    events: deps.events,
  });
  const { quotas } = deps;
  quotas.storage.addSource({ name: 'assets', bytes: assetStoredBytes });
  quotas.usage.register({
    name: 'assets',
    counts: async (owner) => ({ assets: await countWorkspaceAssets(storage.db, owner) }),
    workspacesAtLimit: async (limits) => ({ assets: await workspacesWithAssets(storage.db, limits.assets) }),
  });
  const service = new AssetService({
    store: repository, files, clock, ids, tools: () => tools, runner,
    storage: quotas.storage, maxAssets: quotas.limits.assets, countAssets: countWorkspaceAssets, db: storage.db,
  });

  const start = async (): Promise<void> => {
    const found = deps.mediaTools();
    if (found === undefined) throw new Error('the asset library started before the media tools were looked for');
    if (!found.available) {
      tools = found;
      // Found later (looked for again in the background): the library starts then, without a restart.
      deps.onMediaTools((later) => {
        if (stopped || tools?.available) return;
        void startWith(later).catch((err: unknown) => log.error({ err }, 'the asset library could not start once the media tools were found'));
      });
      return;
    }
    await startWith(found);
  };
  const startWith = async (found: MediaTools & { available: true }): Promise<void> => {
    if (!embedded && config.mediaDir === undefined) {
      throw new ConfigError(
        'Cluster mode with ffmpeg present needs PLAYLINE_MEDIA_DIR (--media-dir): one media directory shared by every instance ' +
          '(uploads are received by one instance and packaged or played by any). Set it to a shared mount, or remove ffmpeg to run without the asset library.',
      );
    }
    await files.prepare();
    const swept = await files.sweepUploads(clock.now(), embedded ? 'all' : STALE_UPLOAD_MS);
    if (swept > 0) log.warn({ uploads: swept }, 'removed uploads cut off by an earlier shutdown');
    packager ??= new FfmpegPackager({ tools: found, ladder, preset: config.packagingPreset, limits: packagingLimitsOf(config), clock });
    tools = found;
    log.info({ mediaDir: files.root }, 'the asset library is available');
    await runner.start();
  };

  let stopped = false;
  const work: BackgroundWork = {
    name: 'asset packaging',
    start: () => {
      stopped = false;
      return start();
    },
    stop: () => {
      stopped = true;
      return runner.stop();
    },
  };
  return {
    service,
    runner,
    files,
    tools: () => tools,
    work,
    parts: {
      name: 'assets',
      apiRoutes: (api) => assetRoutes(api, { service, maxUploadBytes: config.maxUploadBytes }),
      work: [work],
      workspaceData: [
        // Packaging stops and the media goes before the rows (a running job writes under them).
        { name: 'assets', stop: (owner) => service.stopAndRemoveMedia(owner), deleteRows: deleteWorkspaceAssets },
      ],
    },
  };
}
