import { existsSync, mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { killMarkedProcess, writeProcessMarker } from '../../platform/media/process-marker.js';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import { FfmpegProgressParser } from '../../platform/media/ffmpeg-progress.js';
import { failureLine, runMediaProcess } from '../../platform/media/media-process.js';
import { secretFifo, type SecretFifo } from '../../platform/media/secret-fifo.js';
import { isSafePathId, livePlaylistPath } from '../../platform/media/media-layout.js';
import type { PublishJob, PublishOutcome, Publisher } from './publisher.js';
import { planPush, scrub, secretsOfPlan, type PlatformIngest, type PushPlan } from './push-plan.js';
import { startRtmpRelay, type RtmpRelay } from './rtmp-relay.js';
import { startHttpPushRelay, type HttpPushRelay } from './http-push-relay.js';
import { startUdpRelay, type UdpRelay } from './udp-relay.js';
import type { AddressCheck } from './target-probe.js';

/** What a running push reports about itself after `start` (the schedule's status follows). */
export type PushReport =
  | { workspaceId: string; scheduleId: string; state: 'active' }
  | { workspaceId: string; scheduleId: string; state: 'error'; reason: string };

export type PushState = 'starting' | 'active' | 'retrying';

export interface FfmpegPublisherDeps {
  /** The ffmpeg executable, or undefined while it is missing (starts answer 503). */
  ffmpeg: () => string | undefined;
  mediaRoot: string;
  /**
   * Where each running push records its ffmpeg (pid and output), so that after a crash
   * (`kill -9` does not reach children) the next start of the schedule kills the orphan first.
   */
  markerDir?: string;
  clock: Clock;
  log: Logger;
  /** The SSRF guard: where a push may connect, and the address it connects to. */
  checkAddress: AddressCheck;
  ingest: PlatformIngest;
  report: (report: PushReport) => void;
  /**
   * Asked before each retry: whether the schedule still wants this push (it was not stopped,
   * deleted, or moved to another target meanwhile, here or by another instance). Default: yes.
   */
  wanted?: (job: PublishJob) => Promise<boolean>;
  /** How often a running push asks `wanted`. Default 10 s. */
  recheckMs?: number;
  registry?: Registry;
  /** Extra trust roots for rtmps destinations (tests). */
  ca?: string;
  /** Replaces the process runner (unit tests). */
  run?: typeof runMediaProcess;
  /** Time a push has to get its first frames accepted, and to keep them flowing. Default 20 s. */
  stallMs?: number;
  /** Backoff between attempts: doubles from `retryInitialMs` up to `retryMaxMs`. */
  retryInitialMs?: number;
  retryMaxMs?: number;
}

/**
 * The real publisher: each started schedule is a supervised ffmpeg that reads the content's
 * live window (`<media root>/live/<owner>/<content id>/index.m3u8`) at its own pace and copies
 * it to the target. `start` resolves with the first attempt's outcome (accepted: frames flow;
 * or why not); afterwards the push keeps itself alive: a failed attempt is reported (`error`
 * with the reason) and retried with backoff, a successful retry is reported (`active`).
 */
export class FfmpegPublisher implements Publisher {
  private readonly pushes = new Map<string, Push>();
  readonly restarts: Counter | undefined;
  readonly failures: Counter | undefined;

  constructor(private readonly deps: FfmpegPublisherDeps) {
    const registry = deps.registry;
    if (registry) {
      const pushes = this.pushes;
      new Gauge({
        name: 'playline_syndication_pushes',
        help: 'Publishing pushes running on this instance, by state (starting, active, retrying)',
        labelNames: ['state'],
        registers: [registry],
        collect() {
          const counts: Record<PushState, number> = { starting: 0, active: 0, retrying: 0 };
          for (const push of pushes.values()) counts[push.state] += 1;
          for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
        },
      });
      this.restarts = new Counter({ name: 'playline_syndication_push_restarts_total', help: 'Publishing push attempts started again after a failure', registers: [registry] });
      this.failures = new Counter({ name: 'playline_syndication_push_failures_total', help: 'Publishing push attempts that failed (destination refused or went away, stream stalled, content not live)', registers: [registry] });
    }
  }

  async start(job: PublishJob): Promise<PublishOutcome> {
    const plan = planPush(job.target, this.deps.ingest);
    if (plan.kind === 'hls-pull') {
      this.assertLive(job);
      return { ok: true };
    }
    const ffmpeg = this.deps.ffmpeg();
    if (ffmpeg === undefined) throw new AppError('media_tools_missing', 'Publishing runs ffmpeg, which is not available on this server');
    this.assertLive(job);
    await this.pushes.get(job.scheduleId)?.stop();
    if (this.deps.markerDir) await killMarkedProcess(join(this.deps.markerDir, `${job.scheduleId}.json`));
    const push = new Push(job, plan, ffmpeg, this.deps, this, () => {
      if (this.pushes.get(job.scheduleId) === push) this.pushes.delete(job.scheduleId);
    });
    this.pushes.set(job.scheduleId, push);
    push.begin();
    return push.first;
  }

  async stop(job: PublishJob): Promise<void> {
    const push = this.pushes.get(job.scheduleId);
    this.pushes.delete(job.scheduleId);
    await push?.stop();
  }

  /** Stops every push (shutdown). */
  async stopAll(): Promise<void> {
    const all = [...this.pushes.values()];
    this.pushes.clear();
    await Promise.all(all.map((push) => push.stop()));
  }

  /** The push of a schedule, if one runs here (tests, diagnostics). */
  stateOf(scheduleId: string): PushState | undefined {
    return this.pushes.get(scheduleId)?.state;
  }

  private assertLive(job: PublishJob): void {
    if (!isSafePathId(job.contentId) || !existsSync(livePlaylistPath(this.deps.mediaRoot, job.workspaceId, job.contentId))) {
      throw new AppError('content_not_live', `Content ${job.contentId} is not live: no managed slicer of this workspace with that id writes a live window`);
    }
  }
}

class Push {
  state: PushState = 'starting';
  readonly first: Promise<PublishOutcome>;
  private settleFirst!: (outcome: PublishOutcome) => void;
  private stopped = false;
  private failuresInRow = 0;
  private controller: AbortController | undefined;
  private running: Promise<void> | undefined;
  private cancelRetry: (() => void) | undefined;
  private cancelRecheck: (() => void) | undefined;
  private readonly secrets: string[];
  private readonly where: string;

  constructor(
    private readonly job: PublishJob,
    private readonly plan: Exclude<PushPlan, { kind: 'hls-pull' }>,
    private readonly ffmpeg: string,
    private readonly deps: FfmpegPublisherDeps,
    private readonly counters: Pick<FfmpegPublisher, 'restarts' | 'failures'>,
    private readonly forget: () => void,
  ) {
    this.first = new Promise((resolve) => (this.settleFirst = resolve));
    this.secrets = secretsOfPlan(plan, job.target);
    this.where = `${plan.host.includes(':') ? `[${plan.host}]` : plan.host}:${plan.port}`;
  }

  begin(): void {
    if (this.stopped) return;
    if (this.cancelRecheck === undefined && this.deps.wanted) this.recheck();
    this.running = this.attempt().then((reason) => {
      if (this.stopped) return;
      this.failed(reason);
      const delay = Math.min(this.deps.retryMaxMs ?? 30_000, (this.deps.retryInitialMs ?? 1000) * 2 ** Math.min(this.failuresInRow - 1, 16));
      this.cancelRetry = this.deps.clock.setTimer(() => {
        void this.stillWanted().then((wanted) => {
          if (!wanted || this.stopped) return;
          this.counters.restarts?.inc();
          this.begin();
        });
      }, delay);
    });
  }

  /**
   * Every `recheckMs`, and before each retry: a schedule stopped or deleted elsewhere (another
   * instance in cluster mode answered the stop) ends this push instead of leaving it running.
   */
  private recheck(): void {
    this.cancelRecheck = this.deps.clock.setTimer(() => {
      void this.stillWanted().then((wanted) => {
        if (wanted && !this.stopped) this.recheck();
      });
    }, this.deps.recheckMs ?? 10_000);
  }

  private async stillWanted(): Promise<boolean> {
    const wanted = await (this.deps.wanted?.(this.job) ?? Promise.resolve(true)).catch(() => true);
    if (this.stopped) return false;
    if (!wanted) {
      this.deps.log.info({ schedule: this.job.scheduleId }, 'publishing: the schedule no longer wants this push (stopped, deleted or retargeted); it ends');
      this.forget();
      await this.stop();
    }
    return wanted;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelRetry?.();
    this.cancelRecheck?.();
    this.controller?.abort();
    await this.running;
    this.settleFirst({ ok: false, reason: 'stopped' });
  }

  private accepted(): void {
    this.failuresInRow = 0;
    if (this.state === 'active') return;
    this.state = 'active';
    this.deps.log.info({ schedule: this.job.scheduleId, target: this.job.targetId, destination: this.where }, 'publishing: the destination accepts the stream');
    this.settleFirst({ ok: true });
    this.deps.report({ workspaceId: this.job.workspaceId, scheduleId: this.job.scheduleId, state: 'active' });
  }

  private failed(reason: string): void {
    this.failuresInRow += 1;
    this.counters.failures?.inc();
    this.state = 'retrying';
    this.deps.log.warn({ schedule: this.job.scheduleId, target: this.job.targetId, reason }, 'publishing: push failed; retrying');
    this.settleFirst({ ok: false, reason });
    this.deps.report({ workspaceId: this.job.workspaceId, scheduleId: this.job.scheduleId, state: 'error', reason });
  }

  /** One ffmpeg run; resolves with why it ended (only meaningful when not stopped). */
  private async attempt(): Promise<string> {
    const { job, plan, deps } = this;
    const input = livePlaylistPath(deps.mediaRoot, job.workspaceId, job.contentId);
    if (!existsSync(input)) return `content ${job.contentId} is not live (no live window)`;
    const controller = new AbortController();
    this.controller = controller;
    let relay: RtmpRelay | HttpPushRelay | UdpRelay | undefined;
    let uploads: HttpPushRelay | undefined;
    let fifo: SecretFifo | undefined;
    let output: string[];
    const verdict = await deps.checkAddress(plan.host, plan.port);
    if (!verdict.ok) return `not allowed to connect to ${this.where}: ${verdict.detail}`;
    if (this.stopped) return 'stopped';
    if (plan.kind === 'hls-push') {
      relay = uploads = await startHttpPushRelay(
        { baseUrl: plan.baseUrl, address: verdict.address, family: verdict.family, ...(deps.ca ? { ca: deps.ca } : {}) },
        // ffmpeg may go on after a refused upload: the attempt ends here, with the destination's answer.
        () => controller.abort(),
      );
      output = ['-f', 'hls', '-method', 'PUT', '-hls_time', '2', '-hls_list_size', '6', '-hls_flags', 'delete_segments', `${relay.localBase}index.m3u8`];
    } else if (plan.kind === 'rtmp') {
      relay = await startRtmpRelay({ ...plan, address: verdict.address, ...(deps.ca ? { ca: deps.ca } : {}) });
      output = ['-f', 'flv', '-flvflags', 'no_duration_filesize', relay.localUrl];
    } else {
      const options = Object.entries(plan.options);
      // Passphrases and stream ids reach ffmpeg as a preset read from a named pipe, never argv.
      if (options.length > 0) fifo = await secretFifo(options.map(([k, v]) => `${k}=${v.replace(/[\r\n]/g, '')}\n`).join(''));
      let where = `${verdict.family === 6 ? `[${verdict.address}]` : verdict.address}:${plan.port}`;
      if (plan.scheme === 'srt') {
        // SRT runs over one UDP port: a loopback relay keeps the address off the command line too.
        // (RIST pairs ports for RTP and RTCP; its address stays on the command line.)
        relay = await startUdpRelay({ address: verdict.address, family: verdict.family, port: plan.port });
        where = `127.0.0.1:${relay.port}`;
      }
      output = ['-f', 'mpegts', ...(fifo ? ['-fpre', fifo.path] : []), `${plan.scheme}://${where}`];
    }
    const args = [
      '-hide_banner', '-nostdin', '-loglevel', 'error', '-progress', 'pipe:1', '-stats_period', '1',
      '-re', '-live_start_index', '-3', '-i', input,
      '-map', '0:v:0?', '-map', '0:a:0?', '-c', 'copy', ...output,
    ];
    const stallMs = deps.stallMs ?? 20_000;
    let stalled: string | undefined;
    let cancelWatch = () => undefined as void;
    const watch = () => {
      cancelWatch();
      cancelWatch = deps.clock.setTimer(() => {
        stalled = this.state === 'active' ? `the destination stopped taking the stream (no progress for ${stallMs / 1000} s)` : `the destination did not accept the stream within ${stallMs / 1000} s`;
        controller.abort();
      }, stallMs);
    };
    watch();
    let lastOut = 0;
    const parser = new FfmpegProgressParser(({ outTimeUs }) => {
      if (outTimeUs <= lastOut) return;
      // HLS push: frames are only accepted once the destination took a file.
      if (uploads !== undefined && uploads.accepted === 0) return;
      lastOut = outTimeUs;
      watch();
      this.accepted();
    });
    const marker = deps.markerDir ? join(deps.markerDir, `${job.scheduleId}.json`) : undefined;
    const result = await (deps.run ?? runMediaProcess)(this.ffmpeg, args, {
      signal: controller.signal,
      // The output (loopback relay or the SRT/RIST address) names this push on the command line.
      ...(marker ? { onSpawn: (pid: number) => recordPush(marker, pid, output.at(-1) ?? '') } : {}),
      onStdoutLine: (line) => parser.line(line),
      stderrTailLines: 5,
      killGraceMs: 2000,
    });
    cancelWatch();
    if (marker) await rm(marker, { force: true });
    await relay?.close();
    await fifo?.close();
    if (this.state === 'active' && !this.stopped) this.state = 'retrying';
    const reason = stalled ?? relay?.lastFailure ?? `ffmpeg ended: ${failureLine(result)}`;
    return scrub(reason, this.secrets);
  }
}

/** Records a push's ffmpeg in its marker file as it spawns (see writeProcessMarker); a failure only loses the orphan clean-up. */
function recordPush(marker: string, pid: number, tag: string): void {
  try {
    mkdirSync(dirname(marker), { recursive: true });
    writeProcessMarker(marker, pid, tag);
  } catch {
    // the push runs all the same
  }
}
