import { mkdir, readdir, rm } from 'node:fs/promises';
import type { OperationalEventSink } from '../../platform/operational-events.js';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../../platform/clock.js';
import { LIVE_INDEX_FILE, liveDir, liveDirsOfOwner, liveInputDir, liveRoot, recordingsOfOwner } from '../../platform/media/media-layout.js';
import { LiveIndexKeeper } from '../../platform/media/live-index.js';
import { LiveStreamDescriber } from '../../platform/media/live-stream-inf.js';
import { runMediaProcess, type ProcessRunner } from '../../platform/media/media-process.js';
import { killMarkedProcess } from '../../platform/media/process-marker.js';
import { defaultRestartSettings, type RestartSettings } from '../../platform/media/supervision-policy.js';
import {
  ingestUrlOf,
  isListenProtocol,
  listenerPortProblem,
  listenerHeld,
  portOfIngestUrl,
  portsOf,
  unsupportedReason,
  type ListenProtocol,
  type PortRange,
} from './ingest-endpoint.js';
import { hlsPushBaseOf } from './hls-push.js';
import { keyedListenerSource, pushedPlaylistSource, rtmpFrontSource, type SlicerSource } from './slicer-source.js';
import { LIVE_PART_TARGET_S, LIVE_SEGMENT_S, liveLowLatencyOutputArgs, liveOutputArgs } from './live-profiles.js';
import { LowLatencyOutput } from './ll-hls-output.js';
import { LiveSlicerProcess, type LiveStatus } from './live-slicer-process.js';
import { liveEventOf } from './live-status.js';
import { LiveRecorder, type RecordingSink } from './live-recorder.js';
import type { SlicerConfig } from './managed-slicers.schema.js';
import type { ProvisionOutcome, ProvisionRequest, SlicerProvisioner } from './provisioner.js';
import type { RunnerLog } from './task-runner.js';

export interface FfmpegProvisionerOptions {
  /** The ffmpeg executable. */
  ffmpeg: string;
  mediaRoot: string;
  /** Address the ingest listeners bind. */
  bindHost: string;
  /** Host named in ingest URLs (PLAYLINE_PUBLIC_HOST). */
  publicHost: string;
  /** Ports the listeners take (PLAYLINE_SLICER_PORTS). */
  ports: PortRange;
  /** Segments of the rolling live window. */
  windowSegments: number;
  /** x264 preset of transcoding profiles. */
  preset: string;
  clock: Clock;
  log: RunnerLog;
  /** Default: runMediaProcess. */
  run?: ProcessRunner;
  /** How long a started process may take to listen. Default 10 s. */
  readyTimeoutMs?: number;
  /** Backoff after a crash and kill grace (PLAYLINE_MEDIA_*). Default: 1 s doubling to 30 s, 3 s. */
  restart?: RestartSettings;
  /** Time without media after which a source counts as gone (PLAYLINE_SLICER_STALL_MS). Default 10 s. */
  stallMs?: number;
  /** Called on each restart of a slicer process (metrics). */
  onRestart?: () => void;
  /** `hls` push ingest: this instance's base URL as encoders reach it. Without it `hls` is refused. */
  hlsPush?: { baseUrl: () => string };
  /** Operational events: live.started as a slicer's live state goes to `live`, live.ended as it leaves it (webhooks). */
  events?: OperationalEventSink;
  /** Encoder drop-outs: a source back within this many ms continues the event (PLAYLINE_LIVE_RECONNECT_GRACE_MS). Default 0. */
  reconnectGraceMs?: number;
  /** DVR: the default and largest window, seconds, of a low-latency live output (PLAYLINE_LIVE_DVR_WINDOW_S); a slicer's dvr_window_s chooses within it. Default 0 (windowSegments only). */
  dvrWindowS?: number;
  /** Write the live window as LL-HLS (parts, blocking reloads) rather than with ffmpeg's HLS muxer (PLAYLINE_LIVE_LL_HLS). Default false. */
  lowLatency?: boolean;
  /** Where recorded live events go (the asset library); without it nothing is recorded. Low-latency output only. */
  recordings?: () => RecordingSink | undefined;
  /** Whether a workspace's storage has room for more of a recording (its storage quota). Default: always. */
  mayRecord?: (owner: string) => Promise<boolean>;
  /** Whether a workspace's live windows may grow their DVR tail by a segment of `segmentBytes` (its storage quota; LiveStorageRoom). */
  dvrMayGrow?: (owner: string) => (segmentBytes: number) => boolean;
}

/** The largest box (a segment's mdat) a low-latency output takes: far above a 2 s segment at 2160p (about 4 MB). */
const MAX_LOW_LATENCY_SEGMENT_BYTES = 64 * 1024 * 1024;

/** A slicer this instance runs (or tried to run: `process` undefined with a failure). */
interface SlicerEntry {
  slicerId: string;
  owner: string;
  /** The listener's protocol and port; undefined for `hls` push (it arrives through the API). */
  protocol: ListenProtocol | undefined;
  port: number | undefined;
  taskId: string;
  process: LiveSlicerProcess;
  /** Where its source comes from (the RTMP front listens here); closed when the slicer stops. */
  source: SlicerSource;
  /** The sockets a low-latency slicer's ffmpeg writes to; closed when the slicer stops. */
  lowLatency: LowLatencyOutput | undefined;
  /** Keeps each live event for the library (slicers with `record`, low-latency output). */
  recorder: LiveRecorder | undefined;
  /** Why a slicer with `record` cannot record here (PLAYLINE_LIVE_LL_HLS off, no asset library). */
  recordingUnavailable: string | undefined;
  ingestUrl: string;
  /** The key encoders present (hls push checks it against the URL). */
  streamKey: string;
}

/** The slicer's configuration as the provisioner needs it to (re)start it. */
export interface RunnableSlicer {
  slicerId: string;
  owner: string;
  config: SlicerConfig;
  /** Its ingest URL as stored: the port is kept when still free. */
  ingestUrl: string | null;
  /** Its stream key, in clear. */
  streamKey: string;
}

const MARKER = '.slicer-process.json';

/**
 * The real provisioner: each slicer is a supervised ffmpeg process listening on its ingest
 * protocol on a port of the configured range and writing a rolling live HLS window (fMP4) into
 * `liveDir` (media layout). CREATE and UPDATE start it afresh (clearing the window), RESTART starts it
 * again keeping the window, DELETE stops it and removes the window. A task succeeds once the
 * process listens; one that cannot (no free port, refused protocol, ffmpeg ending at once)
 * fails with the reason. Each process records itself in a marker file, so a process left by a
 * killed server is ended before its slicer runs again.
 */
export class FfmpegSlicerProvisioner implements SlicerProvisioner {
  private readonly slicers = new Map<string, SlicerEntry>();
  /** Why a slicer could not be provisioned, until its next task. */
  private readonly failures = new Map<string, string>();
  /** Ports being probed or taken, so concurrent tasks never pick the same. */
  private readonly reserved = new Set<number>();
  private readonly run: ProcessRunner;
  /** Measures the windows whose index.m3u8 ffmpeg wrote without a variant (LiveIndexKeeper). */
  private readonly describer = new LiveStreamDescriber();

  constructor(private readonly options: FfmpegProvisionerOptions) {
    this.run = options.run ?? runMediaProcess;
  }

  create(request: ProvisionRequest): Promise<ProvisionOutcome> {
    return this.converge(request, true);
  }

  update(request: ProvisionRequest): Promise<ProvisionOutcome> {
    return this.converge(request, true);
  }

  restart(request: ProvisionRequest): Promise<ProvisionOutcome> {
    return this.converge(request, false);
  }

  async delete(request: ProvisionRequest): Promise<ProvisionOutcome> {
    await this.stopSlicer(request.slicerId);
    this.failures.delete(request.slicerId);
    const dir = this.outputDir(request.workspaceId, request.slicerId);
    await killMarkedProcess(join(dir, MARKER));
    // A write that was still landing (a run's last segment) makes rmdir see ENOTEMPTY: retried.
    await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    await rm(liveInputDir(this.options.mediaRoot, request.workspaceId, request.slicerId), { recursive: true, force: true });
    return { kind: 'succeeded', ingestUrl: null };
  }

  /** What a slicer run here is doing; undefined when it does not run here. */
  status(slicerId: string): LiveStatus | undefined {
    const entry = this.slicers.get(slicerId);
    if (entry) {
      const recording = entry.recorder?.status() ?? (entry.recordingUnavailable ? { state: 'unavailable' as const, reason: entry.recordingUnavailable } : undefined);
      return { ...entry.process.snapshot(), ...(recording ? { recording } : {}) };
    }
    const reason = this.failures.get(slicerId);
    return reason === undefined ? undefined : { state: 'failed', failureReason: reason, inputKbps: null, lastFrameAt: null, restarts: 0 };
  }

  /** Every slicer run here with its status (metrics). */
  statuses(): LiveStatus[] {
    return [...this.slicers.values()].map((e) => e.process.snapshot());
  }

  /** The stream key of a slicer run here, for hls push (undefined when it does not run here). */
  streamKeyOf(owner: string, slicerId: string): string | undefined {
    const entry = this.slicers.get(slicerId);
    return entry && entry.owner === owner ? entry.streamKey : undefined;
  }

  /** The pid of a slicer's running process (tests, diagnostics). */
  pidOf(slicerId: string): number | undefined {
    return this.slicers.get(slicerId)?.process.running().pid;
  }

  /**
   * Ends the processes that servers killed before left behind (their markers under the live
   * directory, on this host only): run once on start, before any slicer starts.
   */
  async sweepOrphans(): Promise<number> {
    let killed = 0;
    const root = liveRoot(this.options.mediaRoot);
    const owners = await readdir(root).catch(() => [] as string[]);
    for (const owner of owners) {
      const ids = await readdir(join(root, owner)).catch(() => [] as string[]);
      for (const id of ids) if (await killMarkedProcess(join(root, owner, id, MARKER))) killed++;
    }
    return killed;
  }

  /**
   * Starts a slicer that should run but runs nowhere (after a restart of the service, or taken
   * over from an instance that died), keeping its window and, when free, its port.
   */
  resume(s: RunnableSlicer): Promise<ProvisionOutcome> {
    return this.startSlicer({ slicerId: s.slicerId, owner: s.owner, config: s.config, streamKey: s.streamKey, taskId: 'resume', clear: false, preferredPort: portOfIngestUrl(s.ingestUrl), keepPort: false, signal: undefined });
  }

  /** Slicers this instance runs or failed to run (their host leases). */
  held(): string[] {
    return [...new Set([...this.slicers.keys(), ...this.failures.keys()])];
  }

  /** Stops running a slicer here, leaving its output (another instance took it over). */
  async letGo(slicerId: string): Promise<void> {
    this.failures.delete(slicerId);
    await this.stopSlicer(slicerId);
  }

  /** Stops the workspace's slicers and removes their live output (the workspace is being deleted). */
  async stopWorkspace(owner: string): Promise<void> {
    const ids = [...this.slicers.values()].filter((e) => e.owner === owner).map((e) => e.slicerId);
    await Promise.all(ids.map((id) => this.stopSlicer(id)));
    for (const id of ids) this.failures.delete(id);
    for (const dir of [...liveDirsOfOwner(this.options.mediaRoot, owner), recordingsOfOwner(this.options.mediaRoot, owner)]) await rm(dir, { recursive: true, force: true });
  }

  /** Stops every process (graceful shutdown); markers stay only for processes that could not be stopped. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.slicers.keys()].map((id) => this.stopSlicer(id)));
  }

  private outputDir(owner: string, slicerId: string): string {
    return liveDir(this.options.mediaRoot, owner, slicerId);
  }

  private async converge(request: ProvisionRequest, clear: boolean): Promise<ProvisionOutcome> {
    const current = this.slicers.get(request.slicerId);
    // The same task handed over again (a resumed lease) finds its process already running.
    if (current && current.taskId === request.taskId && current.process.running().alive) return { kind: 'succeeded', ingestUrl: current.ingestUrl };
    return this.startSlicer({
      slicerId: request.slicerId,
      owner: request.workspaceId,
      config: request.config,
      streamKey: request.streamKey,
      taskId: request.taskId,
      clear,
      preferredPort: current?.port,
      keepPort: false,
      signal: request.signal,
    });
  }

  private async stopSlicer(slicerId: string): Promise<void> {
    const entry = this.slicers.get(slicerId);
    if (!entry) return;
    this.slicers.delete(slicerId);
    await entry.process.stop();
    await entry.source.close();
    await entry.lowLatency?.close();
    // The event ends with the slicer here (stopped, restarted, deleted, taken over): its recording becomes an asset.
    await entry.recorder?.finish();
    if (entry.protocol !== undefined && entry.port !== undefined) for (const p of portsOf(entry.protocol, entry.port).ports) this.reserved.delete(p);
    await rm(join(this.outputDir(entry.owner, slicerId), MARKER), { force: true });
  }

  private async startSlicer(s: {
    slicerId: string;
    owner: string;
    config: SlicerConfig;
    streamKey: string;
    taskId: string;
    clear: boolean;
    preferredPort: number | undefined;
    keepPort: boolean;
    signal: AbortSignal | undefined;
  }): Promise<ProvisionOutcome> {
    const fail = (reason: string): ProvisionOutcome => {
      this.failures.set(s.slicerId, reason);
      return { kind: 'failed', reason };
    };
    this.failures.delete(s.slicerId);
    const protocol = s.config.ingest_protocol;
    const hlsPush = protocol === 'hls' ? this.options.hlsPush : undefined;
    const refused = hlsPush ? undefined : unsupportedReason(protocol);
    if (refused !== undefined || (!hlsPush && !isListenProtocol(protocol))) return fail(refused ?? `ingest protocol ${protocol} is not supported`);

    await this.stopSlicer(s.slicerId);
    const dir = this.outputDir(s.owner, s.slicerId);
    await killMarkedProcess(join(dir, MARKER));
    if (s.clear) await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    if (s.signal?.aborted) return { kind: 'aborted' };

    const { bindHost, publicHost } = this.options;
    let source: SlicerSource;
    let ingestUrl: string;
    let port: number | undefined;
    let listen: ListenProtocol | undefined;
    if (hlsPush) {
      // The encoder PUTs its playlist and segments into the input directory; ffmpeg reads them once the playlist is there.
      const inputDir = liveInputDir(this.options.mediaRoot, s.owner, s.slicerId);
      if (s.clear) await rm(inputDir, { recursive: true, force: true });
      await mkdir(inputDir, { recursive: true });
      source = pushedPlaylistSource(join(inputDir, LIVE_INDEX_FILE));
      ingestUrl = hlsPushBaseOf(hlsPush.baseUrl(), s.owner, s.slicerId);
    } else {
      listen = protocol as ListenProtocol;
      const taken = await this.takePort(listen, s.preferredPort, s.keepPort);
      if (typeof taken === 'string') return fail(taken);
      port = taken;
      const listenPort = port;
      try {
        source =
          listen === 'rtmp'
            ? await rtmpFrontSource({
                bindHost, port: listenPort, streamKey: s.streamKey, clock: this.options.clock,
                onRefused: (refusal) => this.options.log.info({ slicerId: s.slicerId, reason: refusal.reason, remoteAddress: refusal.remoteAddress }, 'RTMP ingest connection refused'),
              })
            : keyedListenerSource(listen, bindHost, listenPort, s.streamKey);
      } catch (err) {
        for (const p of portsOf(listen, listenPort).ports) this.reserved.delete(p);
        return fail(`could not listen on ${listen.toUpperCase()} port ${listenPort}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      ingestUrl = ingestUrlOf(listen, publicHost, port);
    }
    // Progress goes to stderr: stdout carries the first output, measured (see LiveSlicerProcess).
    const before = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-nostats', '-progress', 'pipe:2'];
    // First output: the source as received, to stdout, where its bytes are counted: the input bitrate.
    const after = ['-map', '0:v?', '-map', '0:a?', '-c', 'copy', '-f', 'mpegts', 'pipe:1'];
    const profileOptions = { windowSegments: this.options.windowSegments, preset: this.options.preset };
    let lowLatency: LowLatencyOutput | undefined;
    let recorder: LiveRecorder | undefined;
    let tag = dir;
    const sink = this.options.recordings?.();
    const recordingUnavailable =
      s.config.record === false ? undefined
      : !this.options.lowLatency ? 'live events are recorded from the low-latency output: this server runs with PLAYLINE_LIVE_LL_HLS=false'
      : !sink ? 'the asset library is not available on this server (ffmpeg)' : undefined;
    if (this.options.lowLatency && sink && s.config.record !== false) {
      const mayRecord = this.options.mayRecord;
      recorder = new LiveRecorder({
        mediaRoot: this.options.mediaRoot,
        owner: s.owner,
        slicerId: s.slicerId,
        liveDir: dir,
        name: s.config.name,
        clock: this.options.clock,
        sink,
        mayGrow: mayRecord ? () => mayRecord(s.owner) : () => Promise.resolve(true),
        ffmpeg: this.options.ffmpeg,
        run: this.run,
        log: this.options.log,
        onReady: (assetId, r) => {
          this.options.events?.emit(s.owner, 'asset.ready', { asset_id: assetId, duration_ms: r.durationMs, renditions: r.renditions.map((x) => x.name) });
          this.options.events?.emit(s.owner, 'recording.ready', { asset_id: assetId, slicer_id: s.slicerId, started_at: r.startedAt, ended_at: r.endedAt, duration_ms: r.durationMs });
        },
      });
      // What a killed server (or an earlier run here) left is finished first.
      void recorder.recoverLeftovers();
    }
    if (this.options.lowLatency) {
      const keeping = recorder;
      const plan = liveLowLatencyOutputArgs(s.config.output_profile, profileOptions, () => '');
      try {
        lowLatency = await LowLatencyOutput.open({
          dir,
          renditions: plan.renditions,
          clock: this.options.clock,
          segmentTargetS: LIVE_SEGMENT_S,
          partTargetS: LIVE_PART_TARGET_S,
          windowSegments: this.options.windowSegments,
          // The slicer's own window, never past the deployment's (it may have been lowered since).
          dvrWindowS: Math.min(s.config.dvr_window_s ?? this.options.dvrWindowS ?? 0, this.options.dvrWindowS ?? 0),
          reconnectGraceMs: this.options.reconnectGraceMs ?? 0,
          maxSegmentBytes: MAX_LOW_LATENCY_SEGMENT_BYTES,
          onError: (err, rendition) => this.options.log.warn({ err, slicerId: s.slicerId, rendition }, 'could not write the low-latency live window'),
          ...(keeping ? { onSegment: (segment) => keeping.segment(segment) } : {}),
          ...(this.options.dvrMayGrow ? { mayGrow: this.options.dvrMayGrow(s.owner) } : {}),
        });
      } catch (err) {
        await source.close();
        if (listen !== undefined && port !== undefined) for (const p of portsOf(listen, port).ports) this.reserved.delete(p);
        return fail(`could not open the low-latency output: ${(err as Error).message}`);
      }
      const output = lowLatency;
      after.push(...liveLowLatencyOutputArgs(s.config.output_profile, profileOptions, (name) => output.urlOf(name)).args);
      // The sockets' private directory is on the command line: the marker's tag.
      tag = output.urlOf(plan.renditions[0]?.name ?? 'main');
    } else {
      after.push(...liveOutputArgs(s.config.output_profile, profileOptions));
      // The last argument (the media playlist) is made absolute, so the output directory is on the command line: the marker's tag.
      after[after.length - 1] = join(dir, after[after.length - 1] as string);
    }
    // ffmpeg's index.m3u8 names no variant for stream copy of a pushed HLS source: made playable for every reader of the window.
    const keeper = new LiveIndexKeeper(dir, this.describer);
    let keeperFailed = false;
    const supervised = new LiveSlicerProcess({
      command: this.options.ffmpeg,
      before,
      input: (signal, again) => source.input(signal, again),
      after,
      cwd: dir,
      run: this.run,
      clock: this.options.clock,
      restart: this.options.restart ?? defaultRestartSettings,
      stallMs: this.options.stallMs ?? 10_000,
      marker: {
        file: join(dir, MARKER),
        tag,
        onError: (err) => this.options.log.warn({ err, slicerId: s.slicerId }, 'could not write the slicer process marker'),
      },
      ...(this.options.onRestart ? { onRestart: this.options.onRestart } : {}),
      onProgress: () => {
        keeper.check().then(
          () => (keeperFailed = false),
          (err: unknown) => {
            if (!keeperFailed) this.options.log.warn({ err, slicerId: s.slicerId }, 'could not make the live window\'s index.m3u8 name its variant');
            keeperFailed = true;
          },
        );
      },
      reconnectGraceMs: this.options.reconnectGraceMs ?? 0,
      // Events, not runs: an encoder back within the grace (reconnecting > live) continues the event.
      onLiveStateChange: (state, previous) => {
        const event = liveEventOf(state, previous);
        if (event === 'live.started') this.options.events?.emit(s.owner, 'live.started', { slicer_id: s.slicerId, state: 'live' });
        else if (event === 'live.ended') {
          this.options.events?.emit(s.owner, 'live.ended', { slicer_id: s.slicerId, state });
          // The event's last segments are written once its runs ended: then its recording becomes an asset.
          if (recorder) void (lowLatency?.settled() ?? Promise.resolve()).then(() => recorder.finish());
        }
      },
      onRunEnd: (end) => {
        const context = { slicerId: s.slicerId, reason: end.reason, exitCode: end.result?.exitCode, signal: end.result?.signal, stderr: end.result?.stderrTail.slice(-3) };
        if (end.cause === 'stalled') this.options.log.info(context, 'slicer source stalled; listening again');
        else if (!end.failure) this.options.log.info(context, 'slicer source ended; listening again');
        else this.options.log.warn(context, 'slicer process ended; starting it again after a backoff');
      },
    });
    const entry: SlicerEntry = { slicerId: s.slicerId, owner: s.owner, protocol: listen, port, taskId: s.taskId, process: supervised, source, lowLatency, recorder, recordingUnavailable, ingestUrl, streamKey: s.streamKey };
    this.slicers.set(s.slicerId, entry);
    supervised.start();
    // hls push is taken by the API at once, RTMP by the front in this process; an SRT or RIST listener is ready once ffmpeg holds its port.
    const ready = listen === undefined || port === undefined || source.listensHere ? true : await this.waitListening(entry, listen, port, s.signal);
    if (ready === true) return { kind: 'succeeded', ingestUrl };
    await this.stopSlicer(s.slicerId);
    if (ready === 'aborted') return { kind: 'aborted' };
    return fail(ready);
  }

  /**
   * A free port: the preferred one (the slicer's current port) when free, else (unless
   * `keepPort`) the first free one of the range. Reserved until the slicer stops. Returns the
   * reason when none is free.
   */
  private async takePort(protocol: ListenProtocol, preferred: number | undefined, keepPort: boolean): Promise<number | string> {
    const { from, to } = this.options.ports;
    const candidates: number[] = [];
    if (preferred !== undefined) candidates.push(preferred);
    if (!keepPort) for (let p = from; p <= to; p++) if (p !== preferred) candidates.push(p);
    let firstProblem: string | undefined;
    for (const port of candidates) {
      const { ports } = portsOf(protocol, port);
      // RIST takes an even port and the odd one after it, both in the range.
      if (protocol === 'rist' && (port % 2 !== 0 || port + 1 > to)) continue;
      if (ports.some((p) => this.reserved.has(p))) continue;
      for (const p of ports) this.reserved.add(p);
      const problem = await listenerPortProblem(protocol, this.options.bindHost, port);
      if (problem === null) return port;
      for (const p of ports) this.reserved.delete(p);
      firstProblem ??= problem;
    }
    const range = keepPort && preferred !== undefined ? `port ${preferred}` : `PLAYLINE_SLICER_PORTS ${from}-${to}`;
    return `No free ingest port (${range}): ${firstProblem ?? 'every port is taken by other slicers of this instance'}`;
  }

  /** True once the process holds its port; else why it does not (it ended, or it took too long), or `aborted`. */
  private async waitListening(entry: SlicerEntry, protocol: ListenProtocol, port: number, signal: AbortSignal | undefined): Promise<true | 'aborted' | string> {
    const deadline = Date.now() + (this.options.readyTimeoutMs ?? 10_000);
    const { ports } = portsOf(protocol, port);
    const probePort = ports[0] as number;
    for (;;) {
      if (signal?.aborted) return 'aborted';
      const status = entry.process.snapshot();
      if (status.restarts > 0 || status.state === 'restarting') {
        return `ffmpeg could not listen on ${protocol.toUpperCase()} port ${port}: ${status.failureReason ?? 'it ended at once'}`;
      }
      const running = entry.process.running();
      if (running.alive && (await listenerHeld(protocol, probePort))) return true;
      if (Date.now() > deadline) return `ffmpeg did not start listening on ${protocol.toUpperCase()} port ${port} within ${Math.round((this.options.readyTimeoutMs ?? 10_000) / 1000)} s`;
      await delay(100);
    }
  }
}
