import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
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
import { ReplayGuard } from './replay-guard.js';

/** The runtime pieces the playback edge is built from (a structural subset of `Runtime`). */
export interface PlaybackEdgeDeps {
  config: Pick<Config, 'logLevel'>;
  clock: Clock;
  ids: IdGenerator;
  storage: { db: Db };
  box: SecretBox;
  /** The owner's API keys (the runtime's KeyRing `get`). */
  signingKeys: SigningKeyLoader;
  /** The statistics ingest (the one behind POST /monitoring/events): playback events go there. */
  ingest: EventIngest;
  metrics?: { registry: Registry };
}

/** Ports with side effects, replaced by fakes in tests. */
export interface PlaybackEdgeOverrides {
  /** Where events go instead of the ingest (tests keep them in memory). */
  events?: PlaybackEventSink;
  adDecisions?: AdDecisionServer;
  drm?: DrmProvider;
  /** Monotonic milliseconds for latencies; default performance.now. */
  stopwatch?: () => number;
  newSecret?: () => string;
  /** Single-use values remembered per guard (pbs, DRM signatures). Default 200,000 each. */
  replayCapacity?: number;
}

export interface PlaybackEdge {
  service: PlaybackEdgeService;
  catalog: PlaybackCatalogService;
  directory: StoredPlaybackDirectory;
  drm: DrmProvider;
  events: PlaybackEventSink;
  sessions: ReplayGuard;
  drmSignatures: ReplayGuard;
  /** Playbacks answered: `ok` and each playback error code. */
  outcomes: Map<string, number>;
  /** On stop, hands the last events to ingest (stop it before statistics). */
  work: BackgroundWork;
}

/** A claim is remembered until its URL expires, and never longer than a day. */
const MAX_CLAIM_MS = 24 * 3600 * 1000;

const registerMetrics = (registry: Registry, edge: Pick<PlaybackEdge, 'outcomes' | 'sessions' | 'drmSignatures'>): void => {
  if (registry.getSingleMetric('playline_playback_edge_playbacks_total')) return;
  const reported = new Map<string, number>();
  new Counter({
    name: 'playline_playback_edge_playbacks_total',
    help: 'Playback manifest requests answered by the edge, by result (ok or the playback error code)',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      for (const [result, total] of edge.outcomes) {
        this.inc({ result }, total - (reported.get(result) ?? 0));
        reported.set(result, total);
      }
    },
  });
  new Gauge({
    name: 'playline_playback_edge_single_use_entries',
    help: 'Single-use values remembered (pbs sessions, DRM signatures), and those forgotten early because memory was full',
    labelNames: ['kind', 'state'] as const,
    registers: [registry],
    collect() {
      this.set({ kind: 'pbs', state: 'held' }, edge.sessions.size);
      this.set({ kind: 'pbs', state: 'evicted' }, edge.sessions.evicted);
      this.set({ kind: 'drm_signature', state: 'held' }, edge.drmSignatures.size);
      this.set({ kind: 'drm_signature', state: 'evicted' }, edge.drmSignatures.evicted);
    },
  });
};

/** Wires the playback edge: catalogue service and its cached directory, replay guards, ports, the edge service. */
export function createPlaybackEdge(deps: PlaybackEdgeDeps, overrides: PlaybackEdgeOverrides = {}): PlaybackEdge {
  const { clock, ids, box } = deps;
  const db = deps.storage.db;
  const log = pino({ name: 'playback-edge', level: deps.config.logLevel });
  const events = overrides.events ?? new IngestEventSink({ ingest: deps.ingest, onError: (message, err) => log.error({ err }, message) });
  const directory = new StoredPlaybackDirectory({ db, box, clock, signingKeys: deps.signingKeys });
  const catalog = new PlaybackCatalogService({
    db,
    box,
    clock,
    ids,
    onChange: (owner) => directory.invalidate(owner),
    ...(overrides.newSecret ? { newSecret: overrides.newSecret } : {}),
  });
  const capacity = overrides.replayCapacity ?? 200_000;
  const sessions = new ReplayGuard({ clock, capacity, maxTtlMs: MAX_CLAIM_MS });
  const drmSignatures = new ReplayGuard({ clock, capacity, maxTtlMs: MAX_CLAIM_MS });
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
    onOutcome: (code) => {
      const result = code === null ? 'ok' : String(code);
      outcomes.set(result, (outcomes.get(result) ?? 0) + 1);
    },
  });
  const work = { name: 'playback-edge', start: () => Promise.resolve(), stop: () => events.flush() };
  const edge: PlaybackEdge = { service, catalog, directory, drm, events, sessions, drmSignatures, outcomes, work };
  if (deps.metrics) registerMetrics(deps.metrics.registry, edge);
  return edge;
}
