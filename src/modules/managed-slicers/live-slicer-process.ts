import type { Clock } from '../../platform/clock.js';
import { failureLine, type MediaProcessOptions, type MediaProcessResult } from '../../platform/media/media-process.js';
import type { LiveStatus } from './live-status.js';

export { liveStates, type LiveState, type LiveStatus } from './live-status.js';

/** Runs one ffmpeg process: `runMediaProcess` or a fake (tests). */
export type ProcessRun = (command: string, args: readonly string[], options: MediaProcessOptions) => Promise<MediaProcessResult>;

export interface LiveProcessOptions {
  command: string;
  args: readonly string[];
  /** Working directory of the process. */
  cwd?: string;
  run: ProcessRun;
  clock: Clock;
  /** First wait before starting a crashed process again; doubles per crash in a row up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Called with the pid of each process started (orphan markers). */
  onSpawn?: (pid: number) => void;
  /** Time without media after which a live slicer shows `waiting_for_source` again. Default 10 s. */
  stallMs?: number;
  /** Called on each restart (metrics). */
  onRestart?: () => void;
  onExit?: (result: MediaProcessResult, wasLive: boolean) => void;
}

const STALL_MS = 10_000;

/**
 * Keeps one slicer's ffmpeg running until stopped. A process that ends after it received media
 * (the source went away) is started again at once to wait for the source; one that ends
 * without media (a crash, a refused input) is started again after a backoff that doubles up
 * to a cap. Reads the process's `-progress` blocks for the input health.
 */
export class LiveSlicerProcess {
  private readonly status: LiveStatus = { state: 'provisioning', failureReason: null, inputKbps: null, lastFrameAt: null, restarts: 0 };
  private controller = new AbortController();
  private stopped = false;
  private cancelBackoff: (() => void) | undefined;
  private wakeBackoff: (() => void) | undefined;
  private crashesInRow = 0;
  private loop: Promise<void> | undefined;
  private current: { pid: number | undefined; alive: boolean } = { pid: undefined, alive: false };

  constructor(private readonly options: LiveProcessOptions) {}

  /** The status now: `live` only while media arrived within `stallMs` (a source can stall without ffmpeg ending). */
  snapshot(): LiveStatus {
    const { lastFrameAt } = this.status;
    if (this.status.state === 'live' && lastFrameAt !== null && this.options.clock.now() - lastFrameAt > (this.options.stallMs ?? STALL_MS)) {
      return { ...this.status, state: 'waiting_for_source', inputKbps: null };
    }
    return { ...this.status };
  }

  /** Whether a process of this slicer runs right now, and its pid. */
  running(): { pid: number | undefined; alive: boolean } {
    return { ...this.current };
  }

  start(): void {
    this.loop ??= this.supervise();
  }

  /** Stops the process (SIGTERM, then SIGKILL) and the supervision; resolves once it is gone. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.controller.abort();
    this.cancelBackoff?.();
    this.wakeBackoff?.();
    await this.loop;
    this.status.state = 'stopped';
  }

  private async supervise(): Promise<void> {
    while (!this.stopped) {
      const wasLive = await this.runOnce();
      if (this.stopped) return;
      this.status.restarts++;
      this.options.onRestart?.();
      if (wasLive) {
        this.crashesInRow = 0;
        this.status.state = 'waiting_for_source';
        continue;
      }
      this.crashesInRow++;
      this.status.state = 'restarting';
      const wait = Math.min(this.options.maxBackoffMs, this.options.backoffMs * 2 ** (this.crashesInRow - 1));
      await this.backoff(wait);
    }
  }

  private backoff(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wakeBackoff = resolve;
      this.cancelBackoff = this.options.clock.setTimer(() => {
        this.cancelBackoff = undefined;
        resolve();
      }, ms);
    });
  }

  /** One run of the process; true when it received media before it ended. */
  private async runOnce(): Promise<boolean> {
    let wasLive = false;
    let lastSize: number | null = null;
    let lastTimeUs: number | null = null;
    let block: { totalSize?: number; outTimeUs?: number } = {};
    this.controller = new AbortController();
    this.status.state = 'waiting_for_source';
    const onLine = (line: string): void => {
      const eq = line.indexOf('=');
      if (eq <= 0) return;
      const key = line.slice(0, eq).trim();
      const value = line.slice(eq + 1).trim();
      if (key === 'total_size') {
        const n = Number(value);
        if (Number.isFinite(n) && n >= 0) block.totalSize = n;
      } else if (key === 'out_time_us') {
        const n = Number(value);
        if (Number.isFinite(n) && n >= 0) block.outTimeUs = n;
      } else if (key === 'progress') {
        const { totalSize, outTimeUs } = block;
        block = {};
        if (outTimeUs === undefined || (lastTimeUs !== null && outTimeUs <= lastTimeUs)) return;
        if (totalSize !== undefined && lastSize !== null && lastTimeUs !== null && totalSize >= lastSize) {
          this.status.inputKbps = Math.round(((totalSize - lastSize) * 8) / ((outTimeUs - lastTimeUs) / 1000));
        }
        if (totalSize !== undefined) lastSize = totalSize;
        lastTimeUs = outTimeUs;
        if (outTimeUs > 0) {
          wasLive = true;
          this.status.lastFrameAt = this.options.clock.now();
          this.status.state = 'live';
          this.status.failureReason = null;
        }
      }
    };
    const result = await this.options.run(this.options.command, this.options.args, {
      signal: this.controller.signal,
      onStdoutLine: onLine,
      onSpawn: (pid) => {
        this.current = { pid, alive: true };
        this.options.onSpawn?.(pid);
      },
      killGraceMs: 3000,
      ...(this.options.cwd !== undefined ? { cwd: this.options.cwd } : {}),
    });
    this.current = { pid: undefined, alive: false };
    this.options.onExit?.(result, wasLive);
    if (!this.stopped) {
      this.status.failureReason = wasLive ? null : failureLine(result);
      this.status.inputKbps = null;
    }
    return wasLive;
  }
}
