import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../platform/clock.js';
import { liveDir, liveDirsOfOwner, liveInputDir, liveRoot, recordingsOfOwner } from '../../platform/media/media-layout.js';
import { runMediaProcess, type ProcessRunner } from '../../platform/media/media-process.js';
import { killMarkedProcess } from '../../platform/media/process-marker.js';
import { defaultRestartSettings, type RestartSettings } from '../../platform/media/supervision-policy.js';
import { isListenProtocol, portOfIngestUrl, unsupportedReason, type PortRange } from './ingest-endpoint.js';
import type { LiveStatus } from './live-slicer-process.js';
import { LiveEvent, type LiveConsumerFactory, type LiveEventDeps } from './live/live-event.js';
import type { IngestAdmission } from './live/ingest-admission.js';
import { PortPool } from './live/port-pool.js';
import type { RistIngestLimits } from './rist-ingest-front.js';
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
  /** Who may publish to which live event, for every protocol. */
  admission: IngestAdmission;
  /** What lives with each live event (recorder, webhooks, index keeper): subscribed to it, not called from here. */
  consumers: readonly LiveConsumerFactory[];
  /** `hls` push ingest: this instance's base URL as encoders reach it. */
  hlsPushBase: () => string;
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
  /** Encoder drop-outs: a source back within this many ms continues the event (PLAYLINE_LIVE_RECONNECT_GRACE_MS). Default 0. */
  reconnectGraceMs?: number;
  /** DVR: the default and largest window, seconds (PLAYLINE_LIVE_DVR_WINDOW_S); a slicer's dvr_window_s chooses within it. Default 0 (windowSegments only). */
  dvrWindowS?: number;
  /** Bounds of the RIST ingest fronts (PLAYLINE_RIST_*); default: rist-ingest-front.ts's. */
  ristLimits?: RistIngestLimits;
  /** The storage quota's hook on a workspace's live windows: false once a new segment would pass it (the DVR tail is trimmed instead). Default: always grow. */
  dvrMayGrow?: (owner: string) => (segmentBytes: number) => boolean;
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
 * The real provisioner: a registry of the live events this instance runs (live/live-event.ts says
 * what one is made of) and the port pool they lease from. CREATE and UPDATE start a slicer's event
 * afresh (clearing the window), RESTART starts it again keeping the window, DELETE stops it and
 * removes the window. A task succeeds once encoders can reach the event; one that cannot (no free
 * port, refused protocol, ffmpeg ending at once) fails with the reason. Each encoder records itself
 * in a marker file, so a process left by a killed server is ended before its slicer runs again.
 */
export class FfmpegSlicerProvisioner implements SlicerProvisioner {
  private readonly events = new Map<string, LiveEvent>();
  /** Why a slicer could not be provisioned, until its next task. */
  private readonly failures = new Map<string, string>();
  /** Each live event's task (a task handed over again finds its event running). */
  private readonly taskOf = new Map<string, string>();
  private readonly ports: PortPool;
  private readonly deps: LiveEventDeps;

  constructor(private readonly options: FfmpegProvisionerOptions) {
    this.ports = new PortPool(options.ports, options.bindHost);
    this.deps = {
      ffmpeg: options.ffmpeg, run: options.run ?? runMediaProcess, clock: options.clock, log: options.log, mediaRoot: options.mediaRoot,
      bindHost: options.bindHost, publicHost: options.publicHost, ports: this.ports, admission: options.admission, hlsPushBase: options.hlsPushBase,
      windowSegments: options.windowSegments, dvrWindowS: options.dvrWindowS ?? 0, reconnectGraceMs: options.reconnectGraceMs ?? 0, preset: options.preset,
      restart: options.restart ?? defaultRestartSettings, stallMs: options.stallMs ?? 10_000, consumers: options.consumers,
      ...(options.ristLimits ? { ristLimits: options.ristLimits } : {}),
      ...(options.dvrMayGrow ? { dvrMayGrow: options.dvrMayGrow } : {}),
      ...(options.onRestart ? { onRestart: options.onRestart } : {}),
    };
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
    const dir = liveDir(this.options.mediaRoot, request.workspaceId, request.slicerId);
    await killMarkedProcess(join(dir, MARKER));
    // A write that was still landing (a run's last segment) makes rmdir see ENOTEMPTY: retried.
    await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    await rm(liveInputDir(this.options.mediaRoot, request.workspaceId, request.slicerId), { recursive: true, force: true });
    return { kind: 'succeeded', ingestUrl: null };
  }

  /** What a slicer run here is doing; undefined when it does not run here. */
  status(slicerId: string): LiveStatus | undefined {
    const event = this.events.get(slicerId);
    if (event) return event.status();
    const reason = this.failures.get(slicerId);
    return reason === undefined ? undefined : { state: 'failed', failureReason: reason, inputKbps: null, lastFrameAt: null, restarts: 0 };
  }

  /** Every slicer run here with its status (metrics). */
  statuses(): LiveStatus[] {
    return [...this.events.values()].map((e) => e.status());
  }

  /** Ports leased by the live events run here (tests: each stop gives its lease back). */
  leasedPorts(): number {
    return this.ports.leased;
  }

  /** The pid of a slicer's running process (tests, diagnostics). */
  pidOf(slicerId: string): number | undefined {
    return this.events.get(slicerId)?.running().pid;
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
    return this.startSlicer({ slicerId: s.slicerId, owner: s.owner, config: s.config, streamKey: s.streamKey, taskId: 'resume', clear: false, preferredPort: portOfIngestUrl(s.ingestUrl), signal: undefined });
  }

  /** Slicers this instance runs or failed to run (their host leases). */
  held(): string[] {
    return [...new Set([...this.events.keys(), ...this.failures.keys()])];
  }

  /** Stops running a slicer here, leaving its output (another instance took it over). */
  async letGo(slicerId: string): Promise<void> {
    this.failures.delete(slicerId);
    await this.stopSlicer(slicerId);
  }

  /** Stops the workspace's slicers and removes their live output (the workspace is being deleted). */
  async stopWorkspace(owner: string): Promise<void> {
    const ids = [...this.events.values()].filter((e) => e.info.owner === owner).map((e) => e.info.slicerId);
    await Promise.all(ids.map((id) => this.stopSlicer(id)));
    for (const id of ids) this.failures.delete(id);
    for (const dir of [...liveDirsOfOwner(this.options.mediaRoot, owner), recordingsOfOwner(this.options.mediaRoot, owner)]) await rm(dir, { recursive: true, force: true });
  }

  /** Stops every process (graceful shutdown); markers stay only for processes that could not be stopped. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.events.keys()].map((id) => this.stopSlicer(id)));
  }

  private async converge(request: ProvisionRequest, clear: boolean): Promise<ProvisionOutcome> {
    const current = this.events.get(request.slicerId);
    // The same task handed over again (a resumed lease) finds its process already running.
    if (current && this.taskOf.get(request.slicerId) === request.taskId && current.running().alive) return { kind: 'succeeded', ingestUrl: current.ingestUrl };
    return this.startSlicer({
      slicerId: request.slicerId, owner: request.workspaceId, config: request.config, streamKey: request.streamKey, taskId: request.taskId,
      clear, preferredPort: current?.lease?.port, signal: request.signal,
    });
  }

  private async stopSlicer(slicerId: string): Promise<void> {
    const event = this.events.get(slicerId);
    if (!event) return;
    this.events.delete(slicerId);
    this.taskOf.delete(slicerId);
    await event.stop();
  }

  private async startSlicer(s: { slicerId: string; owner: string; config: SlicerConfig; streamKey: string; taskId: string; clear: boolean; preferredPort: number | undefined; signal: AbortSignal | undefined }): Promise<ProvisionOutcome> {
    const fail = (reason: string): ProvisionOutcome => {
      this.failures.set(s.slicerId, reason);
      return { kind: 'failed', reason };
    };
    this.failures.delete(s.slicerId);
    const protocol = s.config.ingest_protocol;
    const refused = protocol === 'hls' ? undefined : unsupportedReason(protocol);
    if (refused !== undefined || (protocol !== 'hls' && !isListenProtocol(protocol))) return fail(refused ?? `ingest protocol ${protocol} is not supported`);
    await this.stopSlicer(s.slicerId);
    const dir = liveDir(this.options.mediaRoot, s.owner, s.slicerId);
    await killMarkedProcess(join(dir, MARKER));
    if (s.clear) await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    if (s.signal?.aborted) return { kind: 'aborted' };
    const event = await LiveEvent.open(this.deps, { slicerId: s.slicerId, owner: s.owner, config: s.config, dir, streamKey: s.streamKey, clear: s.clear, preferredPort: s.preferredPort, marker: join(dir, MARKER) });
    if (typeof event === 'string') return fail(event);
    this.events.set(s.slicerId, event);
    this.taskOf.set(s.slicerId, s.taskId);
    const ready = await event.listening(s.signal, this.options.readyTimeoutMs ?? 10_000);
    if (ready === true) return { kind: 'succeeded', ingestUrl: event.ingestUrl };
    await this.stopSlicer(s.slicerId);
    return ready === 'aborted' ? { kind: 'aborted' } : fail(ready);
  }
}
