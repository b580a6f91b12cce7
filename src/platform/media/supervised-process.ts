import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import type { Clock } from '../clock.js';
import { FfmpegProgressParser, type FfmpegProgress } from './ffmpeg-progress.js';
import { failureLine, type MediaProcessResult, type ProcessRunner } from './media-process.js';
import { writeProcessMarker } from './process-marker.js';
import { restartDelay, type SupervisionPolicy } from './supervision-policy.js';

/**
 * Where a supervised process is (after datarhei/core's process states):
 * - `idle`: made, not started;
 * - `starting`: a run is being prepared or runs without progress yet;
 * - `running`: its output advanced;
 * - `ending`: the stall rule or the run's own setup ended it; the process is going;
 * - `backoff`: it ended and waits to start again;
 * - `stopping`, `stopped`: stop() was called (or a restart was no longer wanted); nothing starts again.
 */
export type SupervisedState = 'idle' | 'starting' | 'running' | 'ending' | 'backoff' | 'stopping' | 'stopped';

const next: Record<SupervisedState, readonly SupervisedState[]> = {
  idle: ['starting', 'stopped'],
  starting: ['running', 'ending', 'backoff', 'stopping'],
  running: ['ending', 'backoff', 'stopping'],
  ending: ['backoff', 'stopping'],
  backoff: ['starting', 'stopping', 'stopped'],
  stopping: ['stopped'],
  stopped: [],
};

/** What one run needs; prepared afresh before each start (a push opens its relay here). */
export interface ProcessLaunch {
  args: readonly string[];
  cwd?: string;
  /** What the process reads on its stdin (an RTMP publisher's FLV). */
  stdin?: Readable;
  /**
   * `stdout`: the first output is written to stdout and only measured (its bytes make the bitrate),
   * so `-progress` goes to stderr (`-progress pipe:2`). Default: `-progress pipe:1`, and the
   * bitrate from ffmpeg's `total_size` of the first output.
   */
  measure?: 'stdout';
  /** Text of the command line that names this process in its marker (default: the last argument). */
  tag?: string;
  /** Whether advancing output counts as progress yet (an HLS push: once the destination took a file). */
  accepting?: () => boolean;
  /** Why the run failed when the setup knows better than the tool's stderr (a relay's destination answer). */
  failure?: () => string | undefined;
  /** Releases what the launch opened, once the process is gone. */
  close?: () => Promise<void>;
}

/** Output that advanced, from the `-progress` blocks. */
export interface OutputProgress {
  outTimeUs: number;
  totalSize: number | undefined;
  /** Bitrate of the first output over the last interval, when ffmpeg reported its size. */
  kbps: number | null;
  /** Clock ms of the block. */
  at: number;
}

/** How a run ended (stop() is not an end: it reports nothing). */
export interface RunEnd {
  /** `exited` on its own; `stalled`: the stall rule ended it; `ended` by its launch; `refused`: it never started. */
  cause: 'exited' | 'stalled' | 'ended' | 'refused';
  /** Whether its output advanced before it ended. */
  progressed: boolean;
  /** How the process ended; undefined when it never started. */
  result: MediaProcessResult | undefined;
  /** Why, in one line. */
  reason: string;
  /** Whether it counts as a failure: the backoff applies and `reason` becomes the last failure. */
  failure: boolean;
}

/** What the supervisor shows about itself. */
export interface SupervisionStatus {
  state: SupervisedState;
  /** Runs started after the first one. */
  restarts: number;
  /** Why the last failed run ended; cleared once output advances again. */
  lastFailure: string | null;
  /** The last output that advanced, of any run. */
  progress: OutputProgress | null;
  /** The pid of the process running now. */
  pid: number | undefined;
}

/** Ends the current run from its setup (e.g. a relay saw the destination refuse); the reason is optional. */
export type EndRun = (reason?: string) => void;

export interface SupervisedProcessOptions {
  command: string;
  /** Prepares each run; a string says why this run cannot start (a failed run). A throw counts the same. */
  prepare: (end: EndRun, signal: AbortSignal) => Promise<ProcessLaunch | string>;
  run: ProcessRunner;
  clock: Clock;
  policy: SupervisionPolicy;
  /** The marker file each process is recorded in, synchronously as it spawns (orphan clean-up); removed once it is gone. */
  marker?: { file: string; onError?: (err: unknown) => void };
  stderrTailLines?: number;
  /** Words the reason of an end; `fallback` is the default wording. */
  describe?: (end: Omit<RunEnd, 'reason' | 'failure'> & { detail: string | undefined }, fallback: string) => string;
  /** Asked after the backoff, before each restart: false ends the supervision (the work is no longer wanted). */
  beforeRestart?: () => Promise<boolean>;
  onStateChange?: (state: SupervisedState) => void;
  onProgress?: (progress: OutputProgress) => void;
  onRunEnd?: (end: RunEnd) => void;
  onRestart?: () => void;
}

/** The run in flight: its abort, why it is being ended, and its recent progress samples (oldest first). */
interface Run {
  controller: AbortController;
  ending: { stalled: boolean; reason: string | undefined } | undefined;
  progressed: boolean;
  samples: Sample[];
  cancelWatchdog: (() => void) | undefined;
}

/**
 * Keeps one long-running media process (a slicer, a push) going until stopped: each run is
 * prepared, spawned through the process runner with its marker written at spawn, watched
 * through its `-progress` output by the stall rule, and started again after it ends, at once or
 * after the backoff. stop() ends it (SIGTERM, then SIGKILL after the grace) and resolves once
 * the process is gone and nothing will start again.
 */
export class SupervisedProcess {
  private current: SupervisedState = 'idle';
  private restarts = 0;
  private failuresInRow = 0;
  private lastFailure: string | null = null;
  private progress: OutputProgress | null = null;
  private pid: number | undefined;
  private run: Run | undefined;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly options: SupervisedProcessOptions) {}

  get state(): SupervisedState {
    return this.current;
  }

  status(): SupervisionStatus {
    return { state: this.current, restarts: this.restarts, lastFailure: this.lastFailure, progress: this.progress, pid: this.pid };
  }

  start(): void {
    if (this.current !== 'idle') return;
    this.to('starting');
    this.loop = this.supervise();
  }

  /** Ends the process and the supervision; resolves once the process is gone. */
  async stop(): Promise<void> {
    if (this.current === 'idle') this.to('stopped');
    if (!this.over()) this.to('stopping');
    this.run?.controller.abort();
    this.wake?.();
    await this.loop;
  }

  private over(): boolean {
    return this.current === 'stopping' || this.current === 'stopped';
  }

  private to(state: SupervisedState): void {
    if (!next[this.current].includes(state)) throw new Error(`supervised process: no transition from ${this.current} to ${state}`);
    this.current = state;
    this.options.onStateChange?.(state);
  }

  private async supervise(): Promise<void> {
    for (;;) {
      const end = await this.runOnce();
      if (end === undefined || this.over()) break;
      if (end.progressed) this.failuresInRow = 0;
      if (end.failure) this.failuresInRow += 1;
      this.lastFailure = end.failure ? end.reason : null;
      this.to('backoff');
      this.options.onRunEnd?.(end);
      const wait = end.failure ? restartDelay(this.failuresInRow, this.options.policy.backoff) : 0;
      if (wait > 0) await this.sleep(wait);
      if (this.over()) break;
      if (this.options.beforeRestart && !(await this.options.beforeRestart())) break;
      if (this.over()) break;
      this.restarts += 1;
      this.to('starting');
      this.options.onRestart?.();
    }
    if (this.current !== 'stopped') this.to('stopped');
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.options.clock.setTimer(() => this.wake?.(), ms);
      this.wake = () => {
        this.wake = undefined;
        cancel();
        resolve();
      };
    });
  }

  /** One run, from its preparation until its process is gone; undefined once stopped. */
  private async runOnce(): Promise<RunEnd | undefined> {
    const run: Run = { controller: new AbortController(), ending: undefined, progressed: false, samples: [], cancelWatchdog: undefined };
    this.run = run;
    const launch = await this.options.prepare((reason) => this.end(run, false, reason), run.controller.signal).catch((err: unknown) => `could not prepare the process: ${err instanceof Error ? err.message : String(err)}`);
    if (typeof launch === 'string') {
      this.run = undefined;
      return this.over() ? undefined : this.ended(run, 'refused', undefined, launch);
    }
    if (this.over()) {
      await launch.close?.().catch(() => undefined);
      return undefined;
    }
    const { policy, marker } = this.options;
    // Bytes of a measured stdout: ffmpeg's total_size of a /dev/null output stalls for seconds at a
    // time (the input bitrate read 0 while media flowed), so the bytes are counted here instead.
    let measured = 0;
    const parser = new FfmpegProgressParser((block) => this.advance(run, launch, launch.measure === 'stdout' ? { ...block, totalSize: measured } : block));
    const progressOut =
      launch.measure === 'stdout'
        ? { onStdoutBytes: (bytes: number) => void (measured += bytes), onStderrLine: (line: string) => PROGRESS_LINE.test(line) && (parser.line(line), true) }
        : { onStdoutLine: (line: string) => parser.line(line) };
    if (policy.firstProgressDeadline) this.watch(run);
    const result = await this.options.run(this.options.command, launch.args, {
      signal: run.controller.signal,
      onSpawn: (pid) => {
        this.pid = pid;
        if (marker) recordProcess(marker, pid, launch.tag ?? launch.args.at(-1) ?? '');
      },
      ...progressOut,
      killGraceMs: policy.killGraceMs,
      ...(this.options.stderrTailLines !== undefined ? { stderrTailLines: this.options.stderrTailLines } : {}),
      ...(launch.cwd !== undefined ? { cwd: launch.cwd } : {}),
      ...(launch.stdin ? { stdin: launch.stdin } : {}),
    });
    run.cancelWatchdog?.();
    // From here on, a late call of the launch's end() (a relay closing) or a late block is no news.
    this.run = undefined;
    this.pid = undefined;
    // Neither a marker that cannot be removed nor a relay that fails to close may end the supervision.
    if (marker) await rm(marker.file, { force: true }).catch(() => undefined);
    await launch.close?.().catch(() => undefined);
    if (this.over()) return undefined;
    const cause = run.ending === undefined ? 'exited' : run.ending.stalled ? 'stalled' : 'ended';
    return this.ended(run, cause, result, run.ending?.reason ?? launch.failure?.());
  }

  private ended(run: Run, cause: RunEnd['cause'], result: MediaProcessResult | undefined, detail: string | undefined): RunEnd {
    const { policy } = this.options;
    const seconds = policy.stallMs / 1000;
    const fallback =
      cause === 'stalled'
        ? run.progressed ? `no progress for ${seconds} s` : `no progress within ${seconds} s of the start`
        : detail ?? (result ? failureLine(result) : 'it did not start');
    const facts = { cause, progressed: run.progressed, result, detail };
    const reason = this.options.describe?.(facts, fallback) ?? fallback;
    return { cause, progressed: run.progressed, result, reason, failure: !(run.progressed && policy.endAfterProgress === 'expected') };
  }

  /** Ends a run from outside its process: the stall rule, or the launch. */
  private end(run: Run, stalled: boolean, reason: string | undefined): void {
    if (run !== this.run || run.ending !== undefined || (this.current !== 'starting' && this.current !== 'running')) return;
    run.ending = { stalled, reason };
    this.to('ending');
    run.controller.abort();
  }

  /** The stall rule, the one place it lives: `stallMs` from now without new output ends the run. */
  private watch(run: Run): void {
    run.cancelWatchdog?.();
    run.cancelWatchdog = this.options.clock.setTimer(() => this.end(run, true, undefined), this.options.policy.stallMs);
  }

  /** One `-progress` block: progress when the output advanced (and the launch accepts it). */
  private advance(run: Run, launch: ProcessLaunch, block: FfmpegProgress): void {
    if (run !== this.run || run.ending !== undefined || this.over()) return;
    if (launch.accepting && !launch.accepting()) return;
    const previous = run.samples.at(-1);
    const sample = { outTimeUs: block.outTimeUs, totalSize: block.totalSize };
    if (block.outTimeUs <= (previous?.outTimeUs ?? 0)) {
      // A block before any output is the baseline the first bitrate is measured from.
      if (!previous) run.samples.push(sample);
      return;
    }
    run.samples.push(sample);
    // The window the bitrate is measured over: the last BITRATE_WINDOW_US of output.
    while (run.samples.length > 2 && sample.outTimeUs - (run.samples[1] as Sample).outTimeUs >= BITRATE_WINDOW_US) run.samples.shift();
    this.progress = { outTimeUs: block.outTimeUs, totalSize: block.totalSize, kbps: run.samples.length > 1 ? bitrateKbps(run.samples[0], sample) : null, at: this.options.clock.now() };
    if (!run.progressed) {
      run.progressed = true;
      this.lastFailure = null;
      this.to('running');
    }
    this.watch(run);
    this.options.onProgress?.(this.progress);
  }
}

type Sample = { outTimeUs: number; totalSize: number | undefined };

/** A line of ffmpeg's `-progress` output (`key=value`), as told apart from its log lines on stderr. */
const PROGRESS_LINE = /^(?:frame|fps|stream_\d+_\d+_q|bitrate|total_size|out_time(?:_us|_ms)?|dup_frames|drop_frames|speed|progress)=/;

/**
 * The bitrate is measured over the last few seconds of output, not between two blocks: a muxer
 * writes in bursts (it interleaves audio and video), so two blocks half a second apart often show
 * the same size (0 kbit/s) and the next one twice the rate.
 */
const BITRATE_WINDOW_US = 4_000_000;

/** Kilobits per second between two samples of the first output; null without sizes. */
function bitrateKbps(from: Sample | undefined, to: Sample): number | null {
  if (from?.totalSize === undefined || to.totalSize === undefined || to.totalSize < from.totalSize) return null;
  return Math.round(((to.totalSize - from.totalSize) * 8) / ((to.outTimeUs - from.outTimeUs) / 1000));
}

/** Writes a process's marker as it spawns (see writeProcessMarker); a failure only loses the orphan clean-up. */
function recordProcess(marker: NonNullable<SupervisedProcessOptions['marker']>, pid: number, tag: string): void {
  try {
    mkdirSync(dirname(marker.file), { recursive: true });
    writeProcessMarker(marker.file, pid, tag);
  } catch (err) {
    marker.onError?.(err);
  }
}
