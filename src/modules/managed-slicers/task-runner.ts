import type { Clock } from '../../platform/clock.js';
import type { ProvisionOutcome, SlicerProvisioner } from './provisioner.js';
import { provision } from './provisioner.js';
import type { ClaimedTask, LeaseFence, SlicerTaskStore } from './slicer-store.js';
import type { TerminalTaskState } from './task-state.js';

/** The few logger methods the runner uses (pino's Logger fits). */
export interface RunnerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface TaskRunnerOptions {
  store: SlicerTaskStore;
  provisioner: SlicerProvisioner;
  clock: Clock;
  log: RunnerLog;
  /** Names this runner in task leases; unique per process. */
  ownerId: string;
  /**
   * True when this runner is the only one on its store (embedded mode): on start it takes
   * back every IN_PROGRESS task at once instead of waiting for their leases to expire.
   */
  exclusive?: boolean;
  /** Tasks run at once, over different slicers. Default 4. */
  concurrency?: number;
  /** How long a claim stays valid without renewal. Default 30 s; renewed every third of it. */
  leaseMs?: number;
  /**
   * How often an idle runner checks the queue for work enqueued by other instances or leases
   * that expired. Default 1 s; null when nobody else enqueues (embedded mode): enqueues wake
   * the runner directly, and it only re-checks after an error.
   */
  pollMs?: number | null;
  /** Claims of one task before it is failed instead of resumed once more. Default 3. */
  maxAttempts?: number;
}

interface RunningTask {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Carries out slicer tasks in the background. Tasks of one slicer run strictly in order (the
 * store only hands out the oldest unfinished task of a slicer); tasks of different slicers run
 * concurrently up to `concurrency`. Each state change is persisted before it is acted on, and
 * a task interrupted by a crash or shutdown is resumed from its expired lease, or failed with a
 * reason once it has used up `maxAttempts`.
 */
export class SlicerTaskRunner {
  private readonly store: SlicerTaskStore;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly pollMs: number | null;
  private readonly maxAttempts: number;
  private readonly running = new Map<string, RunningTask>();
  private started = false;
  private stopping = false;
  private pumping: Promise<void> | undefined;
  private pumpAgain = false;
  private cancelPoll: (() => void) | undefined;

  constructor(private readonly options: TaskRunnerOptions) {
    this.store = options.store;
    this.concurrency = options.concurrency ?? 4;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollMs = options.pollMs === undefined ? 1_000 : options.pollMs;
    this.maxAttempts = options.maxAttempts ?? 3;
  }

  /** In exclusive mode takes back the tasks a previous process left IN_PROGRESS, then starts working. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const released = this.options.exclusive ? await this.store.releaseLeases(this.options.clock.now()) : 0;
    if (released > 0) {
      this.options.log.warn({ tasks: released }, 'resuming slicer tasks interrupted by the previous shutdown');
    }
    this.notify();
  }

  /** Looks for work now (called after a task was enqueued). */
  notify(): void {
    if (!this.started || this.stopping) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
      this.schedulePoll();
    });
  }

  /**
   * Looks for work now and resolves once this look is over: a task enqueued before the call
   * is then IN_PROGRESS if this runner could take it (a free slot, no older task of its
   * slicer unfinished), else still PENDING. Lets a change answer with the task's true state.
   */
  async claimNow(): Promise<void> {
    this.notify();
    await this.pumping;
  }

  /** Tasks being carried out by this instance right now. */
  runningTaskIds(): string[] {
    return [...this.running.keys()];
  }

  /**
   * Graceful shutdown: claims nothing more, aborts running provisioner calls and releases their
   * leases, so the next start (or another instance) resumes them at once.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.cancelPoll?.();
    this.cancelPoll = undefined;
    await this.pumping;
    const running = [...this.running.values()];
    for (const task of running) task.controller.abort();
    await Promise.all(running.map((t) => t.done));
  }

  private async pump(): Promise<void> {
    do {
      this.pumpAgain = false;
      while (!this.stopping && this.running.size < this.concurrency) {
        let claimed: ClaimedTask | undefined;
        try {
          claimed = await this.store.claimNextTask({
            owner: this.options.ownerId,
            now: this.options.clock.now(),
            leaseMs: this.leaseMs,
          });
        } catch (err) {
          this.options.log.error({ err }, 'could not claim a slicer task; retrying soon');
          this.schedulePoll(this.pollMs ?? 1_000);
          return;
        }
        if (!claimed) break;
        this.launch(claimed);
      }
    } while (this.pumpAgain && !this.stopping);
  }

  /** One wake-up timer at a time: the idle poll, or a retry after an error. */
  private schedulePoll(ms: number | null = this.pollMs): void {
    if (this.stopping || this.cancelPoll || ms === null) return;
    this.cancelPoll = this.options.clock.setTimer(() => {
      this.cancelPoll = undefined;
      this.notify();
    }, ms);
  }

  private launch(task: ClaimedTask): void {
    const controller = new AbortController();
    const done = this.execute(task, controller)
      .catch((err: unknown) => {
        // The task keeps its lease until expiry, then is resumed: nothing is left hanging.
        this.options.log.error({ err, taskId: task.id }, 'slicer task bookkeeping failed; it will be resumed');
        this.schedulePoll(this.leaseMs);
      })
      .finally(() => {
        this.running.delete(task.id);
        this.notify();
      });
    this.running.set(task.id, { controller, done });
  }

  private async execute(task: ClaimedTask, controller: AbortController): Promise<void> {
    const fence: LeaseFence = { owner: this.options.ownerId, attempt: task.attempts };
    const context = { taskId: task.id, slicerId: task.slicerId, operation: task.operation, attempt: task.attempts };
    if (task.resumed && task.attempts > this.maxAttempts) {
      const interruptions = task.attempts - 1;
      const reason = `Interrupted ${interruptions} time${interruptions === 1 ? '' : 's'} while in progress (service restart); not retried again`;
      await this.finish(task, fence, 'FAILED', reason, undefined);
      return;
    }
    if (task.resumed) this.options.log.info(context, 'resuming slicer task');

    let leaseLost = false;
    const renewal = this.keepLease(task.id, fence, () => {
      leaseLost = true;
      controller.abort();
    });
    let outcome: ProvisionOutcome;
    try {
      outcome = await provision(this.options.provisioner, {
        taskId: task.id,
        slicerId: task.slicerId,
        workspaceId: task.workspaceId,
        operation: task.operation,
        config: task.config,
        signal: controller.signal,
      });
    } catch (err) {
      this.options.log.error({ ...context, err }, 'slicer provisioner threw');
      outcome = { kind: 'failed', reason: `Internal provisioner error (task ${task.id})` };
    } finally {
      renewal.stop();
    }

    if (leaseLost) {
      this.options.log.warn(context, 'lost the lease of a slicer task; another instance carries it on');
      return;
    }
    if (outcome.kind === 'aborted') {
      if (this.stopping) {
        await this.store.releaseLease(task.id, fence, this.options.clock.now());
        return;
      }
      outcome = { kind: 'failed', reason: 'The provisioner aborted the operation' };
    }
    if (outcome.kind === 'failed') {
      await this.finish(task, fence, 'FAILED', outcome.reason, undefined);
    } else {
      await this.finish(task, fence, 'COMPLETED', null, task.operation === 'DELETE' ? null : outcome.ingestUrl);
    }
  }

  private async finish(
    task: ClaimedTask,
    fence: LeaseFence,
    state: TerminalTaskState,
    failureReason: string | null,
    ingestUrl: string | null | undefined,
  ): Promise<void> {
    const now = this.options.clock.now();
    const written = await this.store.finishTask({ taskId: task.id, fence, state, failureReason, ingestUrl, now });
    const context = { taskId: task.id, slicerId: task.slicerId, operation: task.operation, state };
    if (!written) this.options.log.warn(context, 'slicer task was taken over before it finished here; result dropped');
    else if (state === 'FAILED') this.options.log.warn({ ...context, reason: failureReason }, 'slicer task failed');
    else this.options.log.info(context, 'slicer task completed');
  }

  /** Renews the lease every third of its length until stopped; calls `onLost` if it was taken. */
  private keepLease(taskId: string, fence: LeaseFence, onLost: () => void): { stop(): void } {
    const clock = this.options.clock;
    let stopped = false;
    let cancel: (() => void) | undefined;
    const schedule = (): void => {
      if (stopped) return;
      cancel = clock.setTimer(() => {
        this.store
          .renewLease(taskId, fence, clock.now() + this.leaseMs)
          .then((kept) => {
            if (kept) schedule();
            else if (!stopped) onLost();
          })
          .catch((err: unknown) => {
            this.options.log.warn({ err, taskId }, 'could not renew a slicer task lease');
            schedule();
          });
      }, Math.max(1, Math.floor(this.leaseMs / 3)));
    };
    schedule();
    return {
      stop: () => {
        stopped = true;
        cancel?.();
      },
    };
  }
}
