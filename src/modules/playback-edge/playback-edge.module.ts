import { mediaRootOf } from '../../platform/media/media-root.js';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { BackgroundWork } from '../../platform/background-work.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import { BlockingReloads } from './live-blocking-reload.js';
import type { Db } from '../../platform/db/database.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { Logger } from '../../platform/logger.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { SigningKeyLoader } from '../../platform/auth/key-ring.js';
import { SimulatedAdDecisionServer, type AdDecisionServer } from './ad-decision.js';
import { SimulatedDrmProvider, type DrmProvider } from './drm-provider.js';
import { FileMediaLibrary, type MediaLibrary } from './media-library.js';
import { PlaybackCatalogService } from './playback-catalog.service.js';
import { StoredPlaybackDirectory } from './playback-directory.js';
import { playbackEdgeRoutes } from './playback-edge.routes.js';
import { playbackCatalogRoutes } from './playback-catalog.routes.js';
import { contentShareRoutes } from './content-shares.routes.js';
import { deleteWorkspaceRows } from './playback-edge.repository.js';
import type { ModuleParts } from '../../platform/module-parts.js';
import { PlaybackEdgeService } from './playback-edge.service.js';
import type { EventIngest } from '../vod-stats/ingest/event-ingest.js';
import { IngestEventSink, type PlaybackEventSink } from './playback-events.js';
import { PlaybackRefusals } from './playback-refusals.js';
import { PlaybackSessionService, type SessionRequestKind } from './playback-session.service.js';
import { RedisSingleUseGuard } from './redis-single-use-guard.js';
import type { RefusalLimitSettings } from './refusal-limit.js';
import { SessionFirsts } from './session-firsts.js';
import { FileLiveLibrary, type LiveLibrary } from './live-library.js';
import { SessionTokens } from './session-token.js';
import { MemorySingleUseGuard, type SingleUseGuard } from './single-use-guard.js';

/** The runtime pieces the playback edge is built from (a structural subset of `Runtime`). */
export interface PlaybackEdgeDeps {
  config: Pick<Config, 'playbackSingleUseCapacity' | 'playbackMaxLifetimeS' | 'playbackRefusalLimit' | 'playbackRefusalWindowS' | 'dataDir' | 'mediaDir' | 'mediaAccelPrefix'> &
    Partial<Pick<Config, 'liveBlockingReloads' | 'liveBlockingReloadsPerNetwork' | 'connectionPrefixIpv4' | 'connectionPrefixIpv6'>>;
  clock: Clock;
  ids: IdGenerator;
  storage: { db: Db };
  /** Seals catalogue secrets; session tokens are signed with a key derived from it (the same on every instance). */
  box: SecretBox;
  /** The module's logger (a child of the runtime's root). */
  log: Logger;
  /** The owner's API keys (the runtime's KeyRing `get`). */
  signingKeys: SigningKeyLoader;
  /** The statistics ingest (the one behind POST /monitoring/events): playback events go there. */
  ingest: EventIngest;
  metrics: { registry: Registry };
  /** Cluster mode: the deployment's Redis and key prefix; single-use claims live there, shared by every instance. Undefined when embedded. */
  cluster: { redis: Redis; prefix: string } | undefined;
}

/** Ports with side effects, replaced by fakes in tests. */
export interface PlaybackEdgeOverrides {
  /**
   * Wraps or replaces the sink events go to; given the one that hands them to statistics
   * ingest (tests record events on their way, or keep them in memory only).
   */
  events?: (toIngest: PlaybackEventSink) => PlaybackEventSink;
  adDecisions?: AdDecisionServer;
  drm?: DrmProvider;
  /** Monotonic milliseconds for latencies; default performance.now. */
  stopwatch?: () => number;
  newSecret?: () => string;
  /** The packaged media (default: files under the media root). */
  library?: MediaLibrary;
  /** The slicers' live output (default: files under the media root). */
  live?: LiveLibrary;
}

export interface PlaybackEdge {
  service: PlaybackEdgeService;
  /** Serves sessions: `/play/s/<token>/...`. */
  sessions: PlaybackSessionService;
  library: MediaLibrary;
  catalog: PlaybackCatalogService;
  directory: StoredPlaybackDirectory;
  drm: DrmProvider;
  events: PlaybackEventSink;
  /** `pbs` values already used (127), per workspace. */
  pbsGuard: SingleUseGuard;
  /** Signatures of DRM-protected URLs already used (112), per workspace. */
  drmSignatures: SingleUseGuard;
  /** Playbacks answered: `ok`, each playback error code, `throttled`. */
  outcomes: Map<string, number>;
  /** Session requests answered, by `<kind> <result>`. */
  sessionOutcomes: Map<string, number>;
  /** The per-address limit of refused playbacks, for the play routes. */
  refusalLimit: RefusalLimitSettings;
  /** On stop, hands the last events to ingest (stop it before statistics). */
  work: BackgroundWork;
  parts: ModuleParts;
}

/** A claim is remembered until its URL expires, and never longer than a day. */
const MAX_CLAIM_MS = 24 * 3600 * 1000;

type MemoryGuards = { pbs: MemorySingleUseGuard; drm_signature: MemorySingleUseGuard };

/** A counter that reports a map of running totals kept by the services (they never see prom-client). */
const totalsCounter = (registry: Registry, name: string, help: string, labelNames: readonly string[], totals: Map<string, number>, labelsOf: (key: string) => Record<string, string>): void => {
  const reported = new Map<string, number>();
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      for (const [key, total] of totals) {
        this.inc(labelsOf(key), total - (reported.get(key) ?? 0));
        reported.set(key, total);
      }
    },
  });
};

const registerMetrics = (registry: Registry, edge: PlaybackEdge, memoryGuards: MemoryGuards | undefined): void => {
  if (registry.getSingleMetric('playline_playback_edge_playbacks_total')) return;
  totalsCounter(
    registry,
    'playline_playback_edge_playbacks_total',
    'Playback manifest requests answered by the edge, by result (ok, the playback error code, or throttled: a refusal past the per-address limit)',
    ['result'],
    edge.outcomes,
    (result) => ({ result }),
  );
  totalsCounter(
    registry,
    'playline_playback_edge_session_requests_total',
    'Requests under a playback session (/play/s/<token>/...) by kind (variant playlist, content or ad file, unknown path) and result (ok, the playback error code, or throttled)',
    ['kind', 'result'],
    edge.sessionOutcomes,
    (key) => {
      const [kind = 'unknown', result = 'ok'] = key.split(' ');
      return { kind, result };
    },
  );
  // Cluster mode keeps them in Redis, where counting them would cost a scan.
  if (!memoryGuards) return;
  new Gauge({
    name: 'playline_playback_edge_single_use_entries',
    help: 'Single-use values remembered in memory (pbs sessions, DRM signatures), and those forgotten early because their workspace\'s share was full',
    labelNames: ['kind', 'state'] as const,
    registers: [registry],
    collect() {
      for (const [kind, guard] of Object.entries(memoryGuards)) {
        this.set({ kind, state: 'held' }, guard.size);
        this.set({ kind, state: 'evicted' }, guard.evicted);
      }
    },
  });
};

/** The `pbs` and DRM signature guards: in Redis in cluster mode (shared by every instance), else in memory. */
function singleUseGuards(deps: PlaybackEdgeDeps): { sessions: SingleUseGuard; drmSignatures: SingleUseGuard; memoryGuards: MemoryGuards | undefined } {
  const { clock, cluster } = deps;
  if (cluster) {
    const inRedis = (kind: string) => new RedisSingleUseGuard({ redis: cluster.redis, prefix: `${cluster.prefix}edge:${kind}:`, clock, maxTtlMs: MAX_CLAIM_MS });
    return { sessions: inRedis('pbs'), drmSignatures: inRedis('drm'), memoryGuards: undefined };
  }
  const inMemory = () => new MemorySingleUseGuard({ clock, capacityPerOwner: deps.config.playbackSingleUseCapacity, maxTtlMs: MAX_CLAIM_MS });
  const memoryGuards = { pbs: inMemory(), drm_signature: inMemory() };
  return { sessions: memoryGuards.pbs, drmSignatures: memoryGuards.drm_signature, memoryGuards };
}

/** Wires the playback edge: catalogue service and its cached directory, media library, session tokens, single-use guards, ports, the services. */
export function createPlaybackEdge(deps: PlaybackEdgeDeps, overrides: PlaybackEdgeOverrides = {}): PlaybackEdge {
  const { clock, ids, box } = deps;
  const db = deps.storage.db;
  const { log } = deps;
  const onError = (message: string, err: unknown) => log.error({ err }, message);
  const toIngest = new IngestEventSink({ ingest: deps.ingest, onError });
  const events = overrides.events ? overrides.events(toIngest) : toIngest;
  const directory = new StoredPlaybackDirectory({ db, box, clock, signingKeys: deps.signingKeys });
  const catalog = new PlaybackCatalogService({
    db,
    box,
    clock,
    ids,
    onChange: (owner) => directory.invalidate(owner),
    ...(overrides.newSecret ? { newSecret: overrides.newSecret } : {}),
  });
  const library = overrides.library ?? new FileMediaLibrary({ root: mediaRootOf(deps.config), clock, onError });
  const live = overrides.live ?? new FileLiveLibrary(mediaRootOf(deps.config));
  const tokens = new SessionTokens(box.deriveKey('playback-session-token'));
  const refusals = new PlaybackRefusals({ ids, directory, library, events, onError });
  const { sessions: pbsGuard, drmSignatures, memoryGuards } = singleUseGuards(deps);
  const drm = overrides.drm ?? new SimulatedDrmProvider();
  const outcomes = new Map<string, number>();
  const sessionOutcomes = new Map<string, number>();
  const service = new PlaybackEdgeService({
    clock,
    ids,
    directory,
    library,
    live,
    drm,
    adDecisions: overrides.adDecisions ?? new SimulatedAdDecisionServer(clock),
    sessions: pbsGuard,
    drmSignatures,
    maxLifetimeMs: deps.config.playbackMaxLifetimeS * 1000,
    events,
    tokens,
    refusals,
    stopwatch: overrides.stopwatch ?? (() => performance.now()),
    onError,
    onOutcome: (outcome) => {
      const result = outcome === null ? 'ok' : String(outcome);
      outcomes.set(result, (outcomes.get(result) ?? 0) + 1);
    },
  });
  const sessions = new PlaybackSessionService({
    clock,
    library,
    live,
    tokens,
    directory,
    maxLifetimeMs: deps.config.playbackMaxLifetimeS * 1000,
    events,
    firsts: new SessionFirsts(),
    refusals,
    blocking: new BlockingReloads(clock, {
      total: deps.config.liveBlockingReloads ?? 10_000,
      perNetwork: deps.config.liveBlockingReloadsPerNetwork ?? 64,
      prefixes: { ipv4Prefix: deps.config.connectionPrefixIpv4 ?? 24, ipv6Prefix: deps.config.connectionPrefixIpv6 ?? 64 },
    }),
    onOutcome: (kind: SessionRequestKind, outcome) => {
      const key = `${kind} ${outcome === null ? 'ok' : String(outcome)}`;
      sessionOutcomes.set(key, (sessionOutcomes.get(key) ?? 0) + 1);
    },
  });
  const accelPrefix = deps.config.mediaAccelPrefix;
  const mediaAccel = accelPrefix === undefined ? undefined : { prefix: accelPrefix, root: mediaRootOf(deps.config) };
  const work: BackgroundWork = { name: 'playback-edge', start: () => Promise.resolve(), stop: () => events.flush() };
  const refusalLimit: RefusalLimitSettings = {
    max: deps.config.playbackRefusalLimit,
    windowMs: deps.config.playbackRefusalWindowS * 1000,
    clock,
    cluster: deps.cluster,
    onError,
  };
  const parts: ModuleParts = {
    name: 'playback_edge',
    apiRoutes: async (api) => {
      await playbackCatalogRoutes(api, { catalog, drm });
      await contentShareRoutes(api, catalog);
    },
    rootRoutes: (root) => playbackEdgeRoutes(root, { service, sessions, refusalLimit, mediaAccel }),
    work: [work],
    workspaceData: [{ name: 'playback_catalog', deleteRows: deleteWorkspaceRows, forget: async (owner) => directory.invalidate(owner) }],
  };
  const edge: PlaybackEdge = { service, sessions, library, catalog, directory, drm, events, pbsGuard, drmSignatures, outcomes, sessionOutcomes, refusalLimit, work, parts };
  registerMetrics(deps.metrics.registry, edge, memoryGuards);
  return edge;
}
