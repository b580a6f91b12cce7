import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../../../platform/clock.js';
import type { ClosedSegment } from '../../../platform/media/ll-hls-window.js';
import { LIVE_INDEX_FILE, liveInputDir } from '../../../platform/media/media-layout.js';
import type { ProcessRunner } from '../../../platform/media/media-process.js';
import type { RestartSettings } from '../../../platform/media/supervision-policy.js';
import { hlsPushBaseOf } from '../hls-push.js';
import { ingestUrlOf, listenerHeld, portsOf, type ListenProtocol } from '../ingest-endpoint.js';
import { LIVE_PART_TARGET_S, LIVE_SEGMENT_S, liveLowLatencyOutputArgs } from '../live-profiles.js';
import { LiveSlicerProcess, type LiveState, type LiveStatus } from '../live-slicer-process.js';
import { liveEventOf } from '../live-status.js';
import { LowLatencyOutput } from '../ll-hls-output.js';
import type { SlicerConfig } from '../managed-slicers.schema.js';
import { listenerSources, pushedPlaylistSource, type SlicerSource } from '../slicer-source.js';
import type { RistIngestLimits } from '../rist-ingest-front.js';
import type { RunnerLog } from '../task-runner.js';
import type { IngestAdmission } from './ingest-admission.js';
import type { PortLease, PortPool } from './port-pool.js';

/** Which live event a consumer serves. */
export interface LiveEventInfo {
  slicerId: string;
  owner: string;
  config: SlicerConfig;
  /** The live window's directory. */
  dir: string;
}

/**
 * What lives with a live event without the event knowing it by name (the recorder, the webhook
 * events, the window's index keeper): each one subscribes to the parts of the lifecycle it needs.
 * A new consumer is a new factory in the module's list; neither this file nor the provisioner changes.
 */
export interface LiveEventConsumer {
  /** Media arrived while no event was under way: the event started (live.started). */
  started?(): void;
  /** The event ended (its source gone past the reconnect grace, or the slicer stopped here); its last segments are written. */
  ended?(state: LiveState): void | Promise<void>;
  /** Each complete segment of every rendition, before it can leave the window. */
  segment?(segment: ClosedSegment): Promise<void>;
  /** The encoder's output advanced (about twice a second while live). */
  progress?(): void;
  /** What the consumer adds to the slicer's live status. */
  status?(): Pick<LiveStatus, 'recording'>;
  /** The live event stops running here (the slicer stopped, changed, was deleted or taken over). */
  close?(): Promise<void>;
}

export type LiveConsumerFactory = (event: LiveEventInfo) => LiveEventConsumer | undefined;

/** What every live event of this instance is built with (the provisioner's settings). */
export interface LiveEventDeps {
  ffmpeg: string;
  run: ProcessRunner;
  clock: Clock;
  log: RunnerLog;
  mediaRoot: string;
  bindHost: string;
  publicHost: string;
  ports: PortPool;
  admission: IngestAdmission;
  /** `hls` push: this instance's base URL as encoders reach it. */
  hlsPushBase: () => string;
  windowSegments: number;
  dvrWindowS: number;
  reconnectGraceMs: number;
  preset: string;
  restart: RestartSettings;
  stallMs: number;
  onRestart?: () => void;
  consumers: readonly LiveConsumerFactory[];
  /** Bounds of a RIST slicer's UDP front (PLAYLINE_RIST_*); default: rist-ingest-front.ts's. */
  ristLimits?: RistIngestLimits;
  /** The storage quota's hook on a workspace's live windows (live-storage.ts LiveStorageRoom): at the quota the DVR tail is trimmed instead of grown. */
  dvrMayGrow?: (owner: string) => (segmentBytes: number) => boolean;
}

/** One start of a live event: its slicer, its key, and whether its window and input start empty. */
export interface LiveEventSpec extends LiveEventInfo {
  streamKey: string;
  clear: boolean;
  /** The port the slicer had (kept when still free). */
  preferredPort: number | undefined;
  /** The file the encoder's process marker is kept in. */
  marker: string;
}

/** The largest box (a segment's mdat) the window takes: far above a 2 s segment at 2160p (about 4 MB). */
const MAX_SEGMENT_BYTES = 64 * 1024 * 1024;

/**
 * A slicer's live event, as it runs on this instance (mediamtx's `path`): everything a live event
 * is made of, owned here and ended here.
 * - admission: its stream key enrolled in the instance's IngestAdmission for as long as it runs;
 * - source: where encoders reach it (a leased listener port: the RTMP front, SRT/RIST through
 *   ffmpeg's keyed listener; or hls push through the API);
 * - window: the one writer of its LL-HLS window (LowLatencyOutput), fed by
 * - encoder: its supervised ffmpeg (LiveSlicerProcess), whose live state the API, webhooks and
 *   players see (waiting_for_source, live, reconnecting, ...);
 * - consumers: subscribed to its lifecycle (started, ended), segments and progress.
 * `stop` releases all of it, the port lease included, in one place.
 */
export class LiveEvent {
  private lifecycle: Promise<void> = Promise.resolve();
  private stopped = false;

  private constructor(
    private readonly deps: LiveEventDeps,
    readonly info: LiveEventInfo,
    readonly ingestUrl: string,
    /** The leased listener port; undefined for hls push. */
    readonly lease: PortLease | undefined,
    private readonly source: SlicerSource,
    private readonly withdrawKey: () => void,
    private readonly consumers: readonly LiveEventConsumer[],
    private readonly window: LowLatencyOutput,
    private readonly encoder: LiveSlicerProcess,
    private readonly marker: string,
  ) {}

  /** Starts a live event (its encoder waiting for a source); the reason when it cannot. */
  static async open(deps: LiveEventDeps, spec: LiveEventSpec): Promise<LiveEvent | string> {
    const { slicerId, owner, config, dir } = spec;
    const protocol = config.ingest_protocol;
    const withdrawKey = deps.admission.enroll(slicerId, owner, spec.streamKey);
    const undo: Array<() => Promise<void> | void> = [withdrawKey];
    const fail = async (reason: string): Promise<string> => {
      for (const step of undo.reverse()) await step();
      return reason;
    };
    let source: SlicerSource;
    let lease: PortLease | undefined;
    let ingestUrl: string;
    if (protocol === 'hls') {
      // The encoder PUTs its playlist and segments into the input directory (the API asks the admission); ffmpeg reads them once the playlist is there.
      const inputDir = liveInputDir(deps.mediaRoot, owner, slicerId);
      if (spec.clear) await rm(inputDir, { recursive: true, force: true });
      await mkdir(inputDir, { recursive: true });
      source = pushedPlaylistSource(join(inputDir, LIVE_INDEX_FILE));
      ingestUrl = hlsPushBaseOf(deps.hlsPushBase(), owner, slicerId);
    } else {
      const listen = protocol as ListenProtocol;
      const taken = await deps.ports.lease(listen, spec.preferredPort, false);
      if (typeof taken === 'string') return fail(taken);
      lease = taken;
      undo.push(taken.release);
      const bound = { admit: (key: string, remoteAddress: string) => deps.admission.admit({ protocol: listen, slicerId, presentedKey: key, remoteAddress }).admitted, keyMaterial: () => deps.admission.keyOf(slicerId) ?? '', refused: (remoteAddress: string) => deps.admission.refused(listen, slicerId, remoteAddress) };
      try {
        source = await listenerSources[listen]({
          bindHost: deps.bindHost, port: taken.port, clock: deps.clock, admission: bound, ...(deps.ristLimits ? { ristLimits: deps.ristLimits } : {}),
          onRefused: (refusal) => deps.log.info({ slicerId, protocol: listen, reason: refusal.reason, remoteAddress: refusal.remoteAddress }, 'ingest connection refused'),
        });
      } catch (err) {
        return fail(`could not listen on ${listen.toUpperCase()} port ${taken.port}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      ingestUrl = ingestUrlOf(listen, deps.publicHost, taken.port);
    }
    undo.push(() => source.close());
    const info: LiveEventInfo = { slicerId, owner, config, dir };
    const consumers = deps.consumers.map((make) => make(info)).filter((c): c is LiveEventConsumer => c !== undefined);
    undo.push(() => Promise.all(consumers.map((c) => c.close?.())).then(() => undefined));
    const profile = { windowSegments: deps.windowSegments, preset: deps.preset };
    const plan = liveLowLatencyOutputArgs(config.output_profile, profile, () => '');
    let window: LowLatencyOutput;
    try {
      window = await LowLatencyOutput.open({
        dir, renditions: plan.renditions, clock: deps.clock, segmentTargetS: LIVE_SEGMENT_S, partTargetS: LIVE_PART_TARGET_S, windowSegments: deps.windowSegments,
        // The slicer's own DVR window, never past the deployment's (it may have been lowered since).
        dvrWindowS: Math.min(config.dvr_window_s ?? deps.dvrWindowS, deps.dvrWindowS),
        reconnectGraceMs: deps.reconnectGraceMs, maxSegmentBytes: MAX_SEGMENT_BYTES,
        ...(deps.dvrMayGrow ? { mayGrow: deps.dvrMayGrow(info.owner) } : {}),
        onError: (err, rendition) => deps.log.warn({ err, slicerId, rendition }, 'could not write the low-latency live window'),
        onSegment: async (segment) => {
          for (const c of consumers) await c.segment?.(segment);
        },
      });
    } catch (err) {
      return fail(`could not open the low-latency output: ${(err as Error).message}`);
    }
    const encoder = LiveEvent.encoder(deps, spec, source, window, plan.renditions[0]?.name ?? 'main', consumers, () => event);
    const event: LiveEvent = new LiveEvent(deps, info, ingestUrl, lease, source, withdrawKey, consumers, window, encoder, spec.marker);
    encoder.start();
    return event;
  }

  /** The slicer's live status: the encoder's state and what the consumers add (recording). */
  status(): LiveStatus {
    return Object.assign(this.encoder.snapshot(), ...this.consumers.map((c) => c.status?.() ?? {})) as LiveStatus;
  }

  /** Whether a process of this event runs right now, and its pid. */
  running(): { pid: number | undefined; alive: boolean } {
    return this.encoder.running();
  }

  /**
   * True once encoders can reach the event: at once for hls push and the RTMP front (they listen
   * in this process); for SRT/RIST once ffmpeg holds the port. Else why not, or `aborted`.
   */
  async listening(signal: AbortSignal | undefined, timeoutMs: number): Promise<true | 'aborted' | string> {
    const lease = this.lease;
    if (lease === undefined || this.source.listensHere) return true;
    const deadline = Date.now() + timeoutMs;
    const probePort = portsOf(lease.protocol, lease.port).ports[0] as number;
    const name = lease.protocol.toUpperCase();
    for (;;) {
      if (signal?.aborted) return 'aborted';
      const status = this.encoder.snapshot();
      if (status.restarts > 0 || status.state === 'restarting') return `ffmpeg could not listen on ${name} port ${lease.port}: ${status.failureReason ?? 'it ended at once'}`;
      if (this.encoder.running().alive && (await listenerHeld(lease.protocol, probePort))) return true;
      if (Date.now() > deadline) return `ffmpeg did not start listening on ${name} port ${lease.port} within ${Math.round(timeoutMs / 1000)} s`;
      await delay(100);
    }
  }

  /** Ends the event here: the encoder, the source, the window, the consumers (a recording becomes an asset), the key and the port. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.encoder.stop();
    await this.source.close();
    await this.window.close();
    // The event's `ended` (the encoder stopping ends it) reaches the consumers before they close.
    await this.lifecycle;
    for (const c of this.consumers) await c.close?.();
    this.withdrawKey();
    this.lease?.release();
    await rm(this.marker, { force: true });
  }

  private static encoder(deps: LiveEventDeps, spec: LiveEventSpec, source: SlicerSource, window: LowLatencyOutput, firstRendition: string, consumers: readonly LiveEventConsumer[], self: () => LiveEvent): LiveSlicerProcess {
    const { slicerId, config } = spec;
    const log = deps.log;
    return new LiveSlicerProcess({
      command: deps.ffmpeg,
      // Progress goes to stderr: stdout carries the first output (the source as received), whose bytes are the input bitrate.
      before: ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-nostats', '-progress', 'pipe:2'],
      input: (signal, again) => source.input(signal, again),
      after: ['-map', '0:v?', '-map', '0:a?', '-c', 'copy', '-f', 'mpegts', 'pipe:1', ...liveLowLatencyOutputArgs(config.output_profile, { windowSegments: deps.windowSegments, preset: deps.preset }, (name) => window.urlOf(name)).args],
      cwd: spec.dir,
      run: deps.run,
      clock: deps.clock,
      restart: deps.restart,
      stallMs: deps.stallMs,
      // The window's private socket directory is on the command line: the marker's tag.
      marker: { file: spec.marker, tag: window.urlOf(firstRendition), onError: (err) => log.warn({ err, slicerId }, 'could not write the slicer process marker') },
      ...(deps.onRestart ? { onRestart: deps.onRestart } : {}),
      onProgress: () => {
        for (const c of consumers) c.progress?.();
      },
      reconnectGraceMs: deps.reconnectGraceMs,
      // Events, not runs: an encoder back within the grace (reconnecting > live) continues the event.
      onLiveStateChange: (state, previous) => {
        const change = liveEventOf(state, previous);
        if (change === 'live.started') for (const c of consumers) c.started?.();
        else if (change === 'live.ended') {
          const event = self();
          // The event's last segments are written once its runs ended: then the consumers hear of its end.
          event.lifecycle = event.lifecycle.then(async () => {
            await window.settled();
            for (const c of consumers) await c.ended?.(state);
          }).catch((err: unknown) => log.warn({ err, slicerId }, 'a consumer of the live event failed at its end'));
        }
      },
      onRunEnd: (end) => {
        const context = { slicerId, reason: end.reason, exitCode: end.result?.exitCode, signal: end.result?.signal, stderr: end.result?.stderrTail.slice(-3) };
        if (end.cause === 'stalled') log.info(context, 'slicer source stalled; listening again');
        else if (!end.failure) log.info(context, 'slicer source ended; listening again');
        else log.warn(context, 'slicer process ended; starting it again after a backoff');
      },
    });
  }
}
