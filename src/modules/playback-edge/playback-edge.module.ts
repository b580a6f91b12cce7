import { performance } from 'node:perf_hooks';
import { moduleLogger } from '../../platform/logger.js';
import type { Redis } from 'ioredis';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { BackgroundWork } from '../../platform/background-work.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Db } from '../../platform/db/database.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { SigningKeyLoader } from '../../platform/auth/key-ring.js';
import { SimulatedAdDecisionServer, type AdDecisionServer } from './ad-decision.js';
import { SimulatedDrmProvider, type DrmProvider } from './drm-provider.js';
import { PlaybackCatalogService } from './playback-catalog.service.js';
import { StoredPlaybackDirectory } from './playback-directory.js';
import { PlaybackEdgeService } from './playback-edge.service.js';
import type { EventIngest } from '../vod-stats/ingest/event-ingest.js';
import { IngestEventSink, type PlaybackEventSink } from './playback-events.js';
import { RedisSingleUseGuard } from './redis-single-use-guard.js';
import type { RefusalLimitSettings } from './refusal-limit.js';
import { MemorySingleUseGuard, type SingleUseGuard } from './single-use-guard.js';

/** The runtime pieces the playback edge is built from (a structural subset of `Runtime`). */
export interface PlaybackEdgeDeps {
  config: Pick<Config, 'logLevel' | 'playbackSingleUseCapacity' | 'playbackRefusalLimit' | 'playbackRefusalWindowS'>;
  clock: Clock;
  ids: IdGenerator;
  storage: { db: Db };
  box: SecretBox;
  /** The owner's API keys (the runtime's KeyRing `get`). */
  signingKeys: SigningKeyLoader;
  /** The statistics ingest (the one behind POST /monitoring/events): playback events go there. */
  ingest: EventIngest;
  metrics?: { registry: Registry };
  /** Cluster mode: the deployment's Redis and key prefix; single-use claims live there, shared by every instance. */
  cluster?: { redis: Redis; prefix: string };
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
}

export interface PlaybackEdge {
  service: PlaybackEdgeService;
  catalog: PlaybackCatalogService;
  directory: StoredPlaybackDirectory;
  drm: DrmProvider;
  events: PlaybackEventSink;
  /** `pbs` values already used (127), per workspace. */
  sessions: SingleUseGuard;
  /** Signatures of DRM-protected URLs already used (112), per workspace. */
  drmSignatures: SingleUseGuard;
  /** Playbacks answered: `ok`, each playback error code, `throttled`. */
  outcomes: Map<string, number>;
  /** The per-address limit of refused playbacks, for the play routes. */
  refusalLimit: RefusalLimitSettings;
  /** On stop, hands the last events to ingest (stop it before statistics). */
  work: BackgroundWork;
}

/** A claim is remembered until its URL expires, and never longer than a day. */
const MAX_CLAIM_MS = 24 * 3600 * 1000;

type MemoryGuards = { pbs: MemorySingleUseGuard; drm_signature: MemorySingleUseGuard };

const registerMetrics = (registry: Registry, outcomes: PlaybackEdge['outcomes'], memoryGuards: MemoryGuards | undefined): void => {
  if (registry.getSingleMetric('playline_playback_edge_playbacks_total')) return;
  const reported = new Map<string, number>();
  new Counter({
    name: 'playline_playback_edge_playbacks_total',
    help: 'Playback manifest requests answered by the edge, by result (ok, the playback error code, or throttled: a refusal past the per-address limit)',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      for (const [result, total] of outcomes) {
        this.inc({ result }, total - (reported.get(result) ?? 0));
        reported.set(result, total);
      }
    },
  });
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

/** Wires the playback edge: catalogue service and its cached directory, single-use guards, ports, the edge service. */
export function createPlaybackEdge(deps: PlaybackEdgeDeps, overrides: PlaybackEdgeOverrides = {}): PlaybackEdge {
  const { clock, ids, box } = deps;
  const db = deps.storage.db;
  const log = moduleLogger('playback-edge', deps.config.logLevel);
  const toIngest = new IngestEventSink({ ingest: deps.ingest, onError: (message, err) => log.error({ err }, message) });
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
  const { sessions, drmSignatures, memoryGuards } = singleUseGuards(deps);
  const drm = overrides.drm ?? new SimulatedDrmProvider();
  const outcomes = new Map<string, number>();
  const service = new PlaybackEdgeService({
    clock,
    ids,
    directory,
    drm,
    adDecisions: overrides.adDecisions ?? new SimulatedAdDecisionServer(clock),
    sessions,
    drmSignatures,
    events,
    stopwatch: overrides.stopwatch ?? (() => performance.now()),
    onError: (message, err) => log.error({ err }, message),
    onOutcome: (outcome) => {
      const result = outcome === null ? 'ok' : String(outcome);
      outcomes.set(result, (outcomes.get(result) ?? 0) + 1);
    },
  });
  const work = { name: 'playback-edge', start: () => Promise.resolve(), stop: () => events.flush() };
  const refusalLimit: RefusalLimitSettings = {
    max: deps.config.playbackRefusalLimit,
    windowMs: deps.config.playbackRefusalWindowS * 1000,
    clock,
    cluster: deps.cluster,
    onError: (message, err) => log.error({ err }, message),
  };
  const edge: PlaybackEdge = { service, catalog, directory, drm, events, sessions, drmSignatures, outcomes, refusalLimit, work };
  if (deps.metrics) registerMetrics(deps.metrics.registry, outcomes, memoryGuards);
  return edge;
}
