import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../platform/clock.js';

/** How often the output of a running packaging is measured. */
export const OUTPUT_CHECK_MS = 2_000;

/** CPU seconds a running process has used (processCpuSeconds); undefined once it is gone. */
export type CpuReader = (pid: number) => Promise<number | undefined>;

export interface PackagingWatchOptions {
  clock: Clock;
  /** The job's own signal (deletion, shutdown): aborting it aborts the watch's signal too. */
  jobSignal: AbortSignal;
  /** CPU-time budget of the run's media processes together (ms of CPU, every thread counted). */
  cpuBudgetMs: number;
  /**
   * Reads a tracked process's CPU time. Undefined where the system cannot tell (no `/proc`):
   * then the budget is counted in wall-clock time from now instead.
   */
  readCpu: CpuReader | undefined;
  /** The directory the run writes, and the most bytes it may hold. */
  workDir: string;
  maxOutputBytes: number;
}

/**
 * The budgets of one packaging run while its ffmpeg processes run: the CPU time they use
 * together and a ceiling on the bytes written (both measured every OUTPUT_CHECK_MS, and once more
 * when asked). Either one exceeded aborts `signal` and leaves `exceeded` saying why, so the run
 * ends `failed` with that reason, not `aborted` like a shutdown or a deletion.
 *
 * CPU time, not wall-clock time: on a loaded machine (issue 36: load 45) ffmpeg waits for a CPU
 * and a wall-clock deadline failed valid uploads; the CPU it uses is the same however long it waits.
 */
export class PackagingWatch {
  private readonly controller = new AbortController();
  private readonly cancelDeadline: () => void;
  private cancelCheck: (() => void) | undefined;
  private stopped = false;
  private why: string | undefined;
  /** CPU ms of the processes tracked before the current one (their last reading). */
  private spentBeforeMs = 0;
  private current: { pid: number; lastMs: number } | undefined;

  constructor(private readonly options: PackagingWatchOptions) {
    const { clock, jobSignal, cpuBudgetMs, readCpu } = options;
    if (jobSignal.aborted) this.controller.abort();
    else jobSignal.addEventListener('abort', () => this.controller.abort(), { once: true });
    this.cancelDeadline = readCpu ? () => undefined : clock.setTimer(() => this.exceed(this.overBudget()), cpuBudgetMs);
    this.scheduleCheck();
  }

  /** Counts a media process of the run in the CPU budget (from its start). */
  track(pid: number): void {
    if (this.current) this.spentBeforeMs += this.current.lastMs;
    this.current = { pid, lastMs: 0 };
  }

  /** CPU ms the run's processes used, as last measured. */
  get cpuSpentMs(): number {
    return this.spentBeforeMs + (this.current?.lastMs ?? 0);
  }

  /** Aborted when the job is, or when a budget is exceeded. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the run was stopped by its budget; undefined while within it. */
  get exceeded(): string | undefined {
    return this.why;
  }

  /** Measures the CPU time and the output now (the last check, once ffmpeg is done). */
  async checkOutput(): Promise<void> {
    if (this.why !== undefined) return;
    await this.checkCpu();
    if (this.why !== undefined) return;
    const bytes = await bytesUnder(this.options.workDir);
    if (bytes > this.options.maxOutputBytes) {
      this.exceed(`Packaging was stopped: its output passed ${this.options.maxOutputBytes} bytes, the most this server writes for one asset`);
    }
  }

  private async checkCpu(): Promise<void> {
    const { readCpu, cpuBudgetMs } = this.options;
    const current = this.current;
    if (!readCpu || !current) return;
    const seconds = await readCpu(current.pid);
    // Gone: its last reading stands (at most one check interval of its work is not counted).
    if (seconds !== undefined) current.lastMs = Math.max(current.lastMs, seconds * 1000);
    if (this.cpuSpentMs > cpuBudgetMs) this.exceed(this.overBudget());
  }

  private overBudget(): string {
    const unit = this.options.readCpu ? 's of CPU time' : 's';
    return `Packaging was stopped after ${Math.round(this.options.cpuBudgetMs / 1000)} ${unit}, the most this server spends on a video of this duration and frame rate`;
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
