import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../platform/clock.js';

/** How often the output of a running packaging is measured. */
export const OUTPUT_CHECK_MS = 2_000;

export interface PackagingWatchOptions {
  clock: Clock;
  /** The job's own signal (deletion, shutdown): aborting it aborts the watch's signal too. */
  jobSignal: AbortSignal;
  /** Wall-clock budget of the run from now. */
  timeBudgetMs: number;
  /** The directory the run writes, and the most bytes it may hold. */
  workDir: string;
  maxOutputBytes: number;
}

/**
 * The budgets of one packaging run while its ffmpeg processes run: a wall-clock deadline and a
 * ceiling on the bytes written (measured every OUTPUT_CHECK_MS, and once more when asked). Either
 * one exceeded aborts `signal` and leaves `exceeded` saying why, so the run ends `failed` with
 * that reason (a budget failure is never retried), not `aborted` like a shutdown or a deletion.
 */
export class PackagingWatch {
  private readonly controller = new AbortController();
  private readonly cancelDeadline: () => void;
  private cancelCheck: (() => void) | undefined;
  private stopped = false;
  private why: string | undefined;

  constructor(private readonly options: PackagingWatchOptions) {
    const { clock, jobSignal, timeBudgetMs } = options;
    if (jobSignal.aborted) this.controller.abort();
    else jobSignal.addEventListener('abort', () => this.controller.abort(), { once: true });
    this.cancelDeadline = clock.setTimer(() => this.exceed(`Packaging was stopped after ${Math.round(timeBudgetMs / 1000)} s, the longest this server packages a video of this duration`), timeBudgetMs);
    this.scheduleCheck();
  }

  /** Aborted when the job is, or when a budget is exceeded. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the run was stopped by its budget; undefined while within it. */
  get exceeded(): string | undefined {
    return this.why;
  }

  /** Measures the output now (the last check, once ffmpeg is done). */
  async checkOutput(): Promise<void> {
    if (this.why !== undefined) return;
    const bytes = await bytesUnder(this.options.workDir);
    if (bytes > this.options.maxOutputBytes) {
      this.exceed(`Packaging was stopped: its output passed ${this.options.maxOutputBytes} bytes, the most this server writes for one asset`);
    }
  }

  stop(): void {
    this.stopped = true;
    this.cancelDeadline();
    this.cancelCheck?.();
  }

  private exceed(reason: string): void {
    if (this.stopped || this.why !== undefined || this.controller.signal.aborted) return;
    this.why = reason;
    this.controller.abort();
  }

  private scheduleCheck(): void {
    if (this.stopped) return;
    this.cancelCheck = this.options.clock.setTimer(() => {
      this.cancelCheck = undefined;
      void this.checkOutput().catch(() => undefined).finally(() => this.scheduleCheck());
    }, OUTPUT_CHECK_MS);
  }
}

/** Bytes of the regular files under `dir` (0 when it is gone). */
export async function bytesUnder(dir: string): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch {
    return 0;
  }
  let total = 0;
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    // Node 20.1+: entries of a recursive read carry their own directory.
    const parent = (entry as { parentPath?: string; path?: string }).parentPath ?? (entry as { path?: string }).path ?? dir;
    total += await stat(join(parent, entry.name)).then((s) => s.size, () => 0);
  }
  return total;
}
