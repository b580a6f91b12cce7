import type { Clock } from '../../platform/clock.js';
import { listSetting, mediaMemoryLimitBytesOf, type Config } from '../../platform/config.js';
import { memoryLimitedRunner } from '../../platform/media/media-process.js';
import type { Db } from '../../platform/db/database.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { Outbound } from '../../platform/net/outbound.js';
import { ClippingProfileService } from './clipping-profile.service.js';
import { simulatedPublisher, type Publisher } from './publisher.js';
import { ScheduleService } from './schedule.service.js';
import type { SyndicationTables } from './syndication.tables.js';
import { countPublishing, deleteWorkspaceRows, listActiveSchedules, workspacesAtPublishingLimits, type SyndicationDb } from './syndication.repository.js';
import type { OperationalEventSink } from '../../platform/operational-events.js';
import type { Quotas } from '../../platform/quota/quotas.js';
import { syndicationRoutes } from './syndication.routes.js';
import { pullRoutes } from './pull.routes.js';
import type { ModuleParts } from '../../platform/module-parts.js';
import type { SecretSealer } from './target-secrets.js';
import { TargetService } from './target.service.js';
import { FfmpegPublisher } from './ffmpeg-publisher.js';
import { platformNames, type PlatformName } from './syndication.schema.js';
import type { PlatformIngest } from './push-plan.js';
import { ConfigError } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import type { Registry } from 'prom-client';
import type { BackgroundWork } from '../../platform/background-work.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import { restartSettingsOf } from '../../platform/media/supervision-policy.js';
import { join } from 'node:path';
import type { Membership } from '../../platform/cluster/membership.js';

/** The syndication module's services, created once per runtime. */
export interface SyndicationModule {
  targets: TargetService;
  schedules: ScheduleService;
  clippingProfiles: ClippingProfileService;
  regions: readonly string[];
  /** The real publisher (PLAYLINE_PUBLISHER=ffmpeg), for diagnostics and tests; undefined when another one runs. */
  pushes: FfmpegPublisher | undefined;
  /** Stops every push on shutdown. */
  work: BackgroundWork;
  /** Storage and the media root, for the pull URL of Custom hls targets. */
  db: SyndicationDb;
  mediaRoot: string;
  parts: ModuleParts;
}

export interface SyndicationModuleDeps {
  db: Db;
  box: SecretSealer;
  clock: Clock;
  ids: IdGenerator;
  config: Config;
  /**
   * The one way out of the process (platform/net/outbound.ts): the target test and every push
   * connect through it, its guard inside. Tests widen its allow-list; they do not replace a check.
   */
  outbound: Outbound;
  log: Logger;
  registry: Registry;
  /** Resume the pushes of started schedules when work starts (embedded mode: one instance owns every push). */
  resumeOnStart: boolean;
  /**
   * Cluster mode: this instance's id (recorded on the schedules whose push it runs) and the
   * membership, whose dead-instance takeover gives a dead instance's pushes to a survivor.
   * Undefined when embedded.
   */
  cluster: { instanceId: string; membership: Pick<Membership, 'onDead'> } | undefined;
  /** The ffmpeg executable once found (the runtime looks for it at start), else undefined. */
  ffmpeg: () => string | undefined;
  /** The workspaces' quotas: targets, schedules and started schedules (pushes) per workspace. */
  quotas: Quotas;
  /** Operational events (publishing.active, publishing.error) for webhooks; `noOperationalEvents` where none are wanted. */
  events: OperationalEventSink;
}

/** Test seams, kept apart from the production wiring above. */
export interface SyndicationOverrides {
  /** Replaces the push runner (tests: one that fails, or records). */
  publisher?: Publisher;
  /** Extra trust roots for the rtmps/https target test (tests). */
  probeCa?: string;
}

export function createSyndicationModule(deps: SyndicationModuleDeps, overrides: SyndicationOverrides = {}): SyndicationModule {
  const db = deps.db.withTables<SyndicationTables>();
  const { clock, ids, config } = deps;
  const targets = new TargetService({
    db,
    box: deps.box,
    clock,
    ids,
    probe: { outbound: deps.outbound, timeoutMs: 5000, ...(overrides.probeCa ? { ca: overrides.probeCa } : {}) },
    maxTargets: deps.quotas.limits.targets,
  });
  const regions = listSetting(config.regions);
  const pushes: FfmpegPublisher | undefined =
    overrides.publisher === undefined && config.publisher === 'ffmpeg'
      ? new FfmpegPublisher({
          ffmpeg: deps.ffmpeg,
          mediaRoot: mediaRootOf(config),
          markerDir: join(config.dataDir, 'publishing'),
          clock,
          log: deps.log,
          outbound: deps.outbound,
          ingest: parsePlatformIngest(config.platformIngest),
          report: (report) => void schedules.applyPushReport(report.workspaceId, report.scheduleId, report),
          wanted: (job): Promise<boolean> => schedules.stillPublishing(job.workspaceId, job.scheduleId, job.targetId),
          registry: deps.registry,
          ...(overrides.probeCa ? { ca: overrides.probeCa } : {}),
          stallMs: config.publishStallMs,
          restart: restartSettingsOf(config),
          run: memoryLimitedRunner(mediaMemoryLimitBytesOf(config)),
        })
      : undefined;
  const pullHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const schedules = new ScheduleService({
    db,
    clock,
    ids,
    targets,
    publisher: overrides.publisher ?? pushes ?? simulatedPublisher,
    regions,
    pullBaseUrl: `http://${pullHost.includes(':') ? `[${pullHost}]` : pullHost}:${config.port}`,
    ...(deps.cluster ? { instanceId: deps.cluster.instanceId } : {}),
    quota: { schedules: deps.quotas.limits.schedules, activePushes: deps.quotas.limits.active_pushes },
    events: deps.events,
  });
  deps.quotas.usage.register({
    name: 'publishing',
    counts: (owner) => countPublishing(db, owner),
    workspacesAtLimit: (limits) => workspacesAtPublishingLimits(db, limits),
  });
  // A dead instance's pushes: each survivor claims what it can (one claim per schedule) and pushes it.
  if (pushes && deps.cluster) deps.cluster.membership.onDead(async (member) => ({ pushes: await schedules.takeOverPushes(member.id) }));
  const work: BackgroundWork = {
    name: 'publishing pushes',
    start: async () => {
      // Whatever publisher runs (the simulated one starts at once), started schedules publish again.
      if (deps.resumeOnStart) await schedules.resumePublishing();
    },
    stop: async () => pushes?.stopAll(),
  };
  const clippingProfiles = new ClippingProfileService({ db, clock, ids });
  const mediaRoot = mediaRootOf(config);
  return {
    targets,
    schedules,
    clippingProfiles,
    regions,
    pushes,
    work,
    db,
    mediaRoot,
    parts: {
      name: 'syndication',
      apiRoutes: (api) => syndicationRoutes(api, { targets, schedules, clippingProfiles, regions }),
      rootRoutes: (root) => pullRoutes(root, { db, mediaRoot }),
      work: [work],
      workspaceData: [
        {
          name: 'publishing',
          // Publishing stops before its schedules go (an active schedule is a running push).
          async stop(owner) {
            for (const schedule of await listActiveSchedules(db, owner)) await schedules.act(owner, schedule.id, 'stop').catch(() => undefined);
          },
          deleteRows: deleteWorkspaceRows,
        },
      ],
    },
  };
}

/** PLAYLINE_PLATFORM_INGEST: `{"<platform>": "rtmp[s]://host[:port]/<app>/"}`; a bad value stops the start with the reason. */
export function parsePlatformIngest(text: string): PlatformIngest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError('PLAYLINE_PLATFORM_INGEST (--platform-ingest) is not JSON: give an object such as {"Twitch":"rtmp://host/app/"}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError('PLAYLINE_PLATFORM_INGEST (--platform-ingest) must be a JSON object');
  const ingest: PlatformIngest = {};
  for (const [name, url] of Object.entries(parsed)) {
    if (!(platformNames as readonly string[]).includes(name) || name === 'Custom') throw new ConfigError(`PLAYLINE_PLATFORM_INGEST (--platform-ingest): ${name} is not a social platform (${platformNames.filter((p) => p !== 'Custom').join(', ')})`);
    if (typeof url !== 'string' || !/^rtmps?:\/\/[^/\s]+\/[^\s]+$/.test(url)) throw new ConfigError(`PLAYLINE_PLATFORM_INGEST (--platform-ingest): the ingest of ${name} must be an rtmp:// or rtmps:// URL with an application path`);
    ingest[name as PlatformName] = url;
  }
  return ingest;
}
