import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { killMarkedProcess } from '../../platform/media/process-marker.js';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import { runMediaProcess, type ProcessRunner } from '../../platform/media/media-process.js';
import { SupervisedProcess, type EndRun, type ProcessLaunch } from '../../platform/media/supervised-process.js';
import { defaultRestartSettings, type RestartSettings } from '../../platform/media/supervision-policy.js';
import { isSafePathId, livePlaylistPath } from '../../platform/media/media-layout.js';
import type { PublishJob, PublishOutcome, Publisher } from './publisher.js';
import { openPushOutput, pushArgs } from './push-output.js';
import { planPush, scrub, secretsOfPlan, type PlatformIngest, type PushPlan } from './push-plan.js';
import type { Outbound } from '../../platform/net/outbound.js';

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
  /** The outbound layer: where a push may connect (its guard), and the pinned connections there. */
  outbound: Outbound;
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
  run?: ProcessRunner;
  /** Time a push has to get its first frames accepted, and to keep them flowing (PLAYLINE_PUBLISH_STALL_MS). Default 20 s. */
  stallMs?: number;
  /** Backoff between attempts and kill grace (PLAYLINE_MEDIA_*). Default: 1 s doubling to 30 s, 3 s. */
  restart?: RestartSettings;
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

/**
 * One started schedule's push, as a configuration of the media supervisor: every run must get
 * its first frames accepted within the stall time and keep them flowing (a push is meant to run
 * forever, so any end is a failure: reported, then retried after the backoff); each run opens
 * its output afresh (push-output.ts). Before each retry, and every `recheckMs`, it asks whether
 * the schedule still wants it.
 */
class Push {
  readonly first: Promise<PublishOutcome>;
  private settleFirst!: (outcome: PublishOutcome) => void;
  private stopped = false;
  /** The SSRF guard refused the destination: retrying cannot help, the push ends after reporting it. */
  private refused = false;
  private cancelRecheck: (() => void) | undefined;
  private readonly supervisor: SupervisedProcess;
  private readonly secrets: string[];
  private readonly where: string;

  constructor(
    private readonly job: PublishJob,
    private readonly plan: Exclude<PushPlan, { kind: 'hls-pull' }>,
    ffmpeg: string,
    private readonly deps: FfmpegPublisherDeps,
    counters: Pick<FfmpegPublisher, 'restarts' | 'failures'>,
    private readonly forget: () => void,
  ) {
    this.first = new Promise((resolve) => (this.settleFirst = resolve));
    this.secrets = secretsOfPlan(plan, job.target);
    this.where = `${plan.host.includes(':') ? `[${plan.host}]` : plan.host}:${plan.port}`;
    const stallMs = deps.stallMs ?? 20_000;
    const seconds = stallMs / 1000;
    this.supervisor = new SupervisedProcess({
      command: ffmpeg,
      run: deps.run ?? runMediaProcess,
      clock: deps.clock,
      policy: { ...(deps.restart ?? defaultRestartSettings), stallMs, firstProgressDeadline: true, endAfterProgress: 'failure' },
      prepare: (end, signal) => this.prepare(end, signal),
      ...(deps.markerDir ? { marker: { file: join(deps.markerDir, `${job.scheduleId}.json`) } } : {}),
      stderrTailLines: 5,
      describe: (end, fallback) => {
        const reason =
          end.cause === 'stalled'
            ? end.progressed ? `the destination stopped taking the stream (no progress for ${seconds} s)` : `the destination did not accept the stream within ${seconds} s`
            : end.detail ?? `ffmpeg ended: ${fallback}`;
        return scrub(reason, this.secrets);
      },
      beforeRestart: () => this.stillWanted(),
      onStateChange: (state) => {
        if (state === 'running') this.accepted();
      },
      onRunEnd: (end) => {
        counters.failures?.inc();
        this.failed(end.reason);
        if (this.refused) {
          // Not awaited: the supervisor is reporting this very end.
          this.forget();
          void this.stop();
        }
      },
      onRestart: () => counters.restarts?.inc(),
    });
  }

  get state(): PushState {
    const { state, restarts } = this.supervisor.status();
    if (state === 'running') return 'active';
    return restarts === 0 && (state === 'idle' || state === 'starting') ? 'starting' : 'retrying';
  }

  begin(): void {
    if (this.deps.wanted) this.recheck();
    this.supervisor.start();
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
      // Not awaited: asked before a retry, the supervisor is waiting for this very answer.
      void this.stop();
    }
    return wanted;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelRecheck?.();
    await this.supervisor.stop();
    this.settleFirst({ ok: false, reason: 'stopped' });
  }

  private accepted(): void {
    this.deps.log.info({ schedule: this.job.scheduleId, target: this.job.targetId, destination: this.where }, 'publishing: the destination accepts the stream');
    this.settleFirst({ ok: true });
    this.deps.report({ workspaceId: this.job.workspaceId, scheduleId: this.job.scheduleId, state: 'active' });
  }

  private failed(reason: string): void {
    this.deps.log.warn({ schedule: this.job.scheduleId, target: this.job.targetId, reason }, this.refused ? 'publishing: push refused by the outbound guard; not retried' : 'publishing: push failed; retrying');
    this.settleFirst({ ok: false, reason });
    this.deps.report({ workspaceId: this.job.workspaceId, scheduleId: this.job.scheduleId, state: 'error', reason });
  }

  /** One run's launch: the live window as input, the destination checked, its output opened; else why not. */
  private async prepare(end: EndRun, signal: AbortSignal): Promise<ProcessLaunch | string> {
    const { job, plan, deps } = this;
    const input = livePlaylistPath(deps.mediaRoot, job.workspaceId, job.contentId);
    if (!existsSync(input)) return `content ${job.contentId} is not live (no live window)`;
    const verdict = await deps.outbound.admit(plan.host, plan.port);
    if (!verdict.ok) {
      this.refused = true;
      return `not allowed to connect to ${this.where}: ${verdict.detail}; not retried (change the target, or admit it with PLAYLINE_OUTBOUND_ALLOWLIST, then start the schedule again)`;
    }
    if (signal.aborted) return 'stopped';
    // ffmpeg may go on after a refused HLS upload: the run ends there, with the destination's answer.
    const output = await openPushOutput(plan, verdict.destination, deps.outbound, deps.ca, (reason) => end(reason));
    // The output (loopback relay or the SRT/RIST address) names this push on the command line: the marker's tag.
    return { args: pushArgs(input, output.args), tag: output.args.at(-1) ?? '', accepting: output.accepting, failure: output.failure, close: () => output.close() };
  }
}
