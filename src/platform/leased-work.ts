import type { Clock } from './clock.js';

/** The few logger methods a work runner uses (pino's Logger fits). */
export interface RunnerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** One job being carried out by this process. */
export interface RunningWork {
  /** Aborted to stop the job (shutdown, a lost lease, a cancellation). */
  controller: AbortController;
  /** Settles once the job's bookkeeping is over. */
  done: Promise<void>;
}

export interface LeasedWorkOptions<J> {
  clock: Clock;
  log: RunnerLog;
  /** What a job is called in the log ("packaging job", "slicer task"). */
  noun: string;
  /** Jobs carried out at once. */
  concurrency: number;
  /** Lease length: a job whose bookkeeping failed is looked for again after it. */
  leaseMs: number;
  /** How often an idle runner looks for work enqueued elsewhere; null when only its own enqueues create work. */
  pollMs: number | null;
  /** Claims the next job under a lease held by this process, or nothing. */
  claim(): Promise<J | undefined>;
  /** Names a claimed job (its key while it runs). */
  keyOf(job: J): string;
  /** Carries a claimed job out; throwing leaves the job to its lease (taken up again once it expires). */
  run(job: J, controller: AbortController): Promise<void>;
  /** Called once at start when this runner is the only one on its store: takes back every held lease, returns how many. */
  releaseHeld?(): Promise<number>;
  /** Logged (with the count) when `releaseHeld` took jobs back. */
  resumedMessage?: string;
}

/**
 * The loop every background runner over a leased job queue shares (asset packaging, slicer tasks):
 * claims jobs up to `concurrency`, looks again when told (`notify`) or when the idle poll fires,
 * retries a failed claim after a pause, and on `stop` claims nothing more, aborts what runs and
 * waits for it. What a job does, and how its lease is fenced, stays with its runner.
 */
export class LeasedWork<J> {
  private readonly running = new Map<string, RunningWork>();
  private started = false;
  private stoppingNow = false;
  private pumping: Promise<void> | undefined;
  private pumpAgain = false;
  private cancelPoll: (() => void) | undefined;

  constructor(private readonly options: LeasedWorkOptions<J>) {}

  /** True once `stop` was called: aborted jobs give their lease back rather than fail. */
  get stopping(): boolean {
    return this.stoppingNow;
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const released = this.options.releaseHeld ? await this.options.releaseHeld() : 0;
    if (released > 0) this.options.log.warn({ jobs: released }, this.options.resumedMessage ?? `taking back ${this.options.noun}s held before the restart`);
    this.notify();
  }

  /** Looks for work now (after an enqueue). */
  notify(): void {
    if (!this.started || this.stoppingNow) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
      this.schedulePoll();
    });
  }

  /** Looks for work now and resolves once this look is over (a change can answer with the state that follows). */
  async claimNow(): Promise<void> {
    this.notify();
    await this.pumping;
  }

  /** The job running here under `key`, if any. */
  get(key: string): RunningWork | undefined {
    return this.running.get(key);
  }

  /** Keys of the jobs running here. */
  keys(): string[] {
    return [...this.running.keys()];
  }

  get size(): number {
    return this.running.size;
  }

  /** Looks again after `ms` (at most one wake-up timer at a time). */
  retryAfter(ms: number): void {
    this.schedulePoll(ms);
  }

  /** Claims nothing more, aborts the running jobs and waits until their bookkeeping is over. */
  async stop(): Promise<void> {
    this.stoppingNow = true;
    this.cancelPoll?.();
    this.cancelPoll = undefined;
    await this.pumping;
    const running = [...this.running.values()];
    for (const job of running) job.controller.abort();
    await Promise.all(running.map((j) => j.done));
  }

  private async pump(): Promise<void> {
    const { options } = this;
    do {
      this.pumpAgain = false;
      while (!this.stoppingNow && this.running.size < options.concurrency) {
        let claimed: J | undefined;
        try {
          claimed = await options.claim();
        } catch (err) {
          options.log.error({ err }, `could not claim a ${options.noun}; retrying soon`);
          this.schedulePoll(options.pollMs ?? 1_000);
          return;
        }
        if (claimed === undefined) break;
        this.launch(claimed);
      }
    } while (this.pumpAgain && !this.stoppingNow);
  }

  private schedulePoll(ms: number | null = this.options.pollMs): void {
    if (this.stoppingNow || this.cancelPoll || ms === null) return;
    this.cancelPoll = this.options.clock.setTimer(() => {
      this.cancelPoll = undefined;
      this.notify();
    }, ms);
  }

  private launch(job: J): void {
    const key = this.options.keyOf(job);
    const controller = new AbortController();
    const done = this.options
      .run(job, controller)
      .catch((err: unknown) => {
        // The job keeps its lease until it expires, then is taken up again: nothing hangs.
        this.options.log.error({ err, job: key }, `${this.options.noun} bookkeeping failed; it will be taken up again`);
        this.schedulePoll(this.options.leaseMs);
      })
      .finally(() => {
        this.running.delete(key);
        this.notify();
      });
    this.running.set(key, { controller, done });
  }
}

/**
 * Renews a lease every third of its length until stopped; calls `onLost` once when `renew`
 * answers false (the lease was taken over, or its job deleted). A renewal that throws is logged
 * and tried again at the next third.
 */
export function keepLease(options: {
  clock: Clock;
  leaseMs: number;
  renew(until: number): Promise<boolean>;
  onLost(): void;
  onError(err: unknown): void;
}): { stop(): void } {
  const { clock, leaseMs } = options;
  let stopped = false;
  let cancel: (() => void) | undefined;
  const schedule = (): void => {
    if (stopped) return;
    cancel = clock.setTimer(() => {
      options
        .renew(clock.now() + leaseMs)
        .then((kept) => {
          if (kept) schedule();
          else if (!stopped) options.onLost();
        })
        .catch((err: unknown) => {
          options.onError(err);
          schedule();
        });
    }, Math.max(1, Math.floor(leaseMs / 3)));
  };
  schedule();
  return {
    stop: () => {
      stopped = true;
      cancel?.();
    },
  };
}
