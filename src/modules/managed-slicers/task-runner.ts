import type { Clock } from '../../platform/clock.js';
import { keepLease, LeasedWork, type RunnerLog } from '../../platform/leased-work.js';
import type { ProvisionOutcome, SlicerProvisioner } from './provisioner.js';
import { provision } from './provisioner.js';
import type { ClaimedTask, LeaseFence, SlicerTaskStore } from './slicer-store.js';
import type { TerminalTaskState } from './task-state.js';

export type { RunnerLog };

export interface TaskRunnerOptions {
  store: SlicerTaskStore;
  provisioner: SlicerProvisioner;
  clock: Clock;
  log: RunnerLog;
  /** Names this runner in task leases; unique per process. */
  ownerId: string;
  /**
   * The slicer's stream key in clear as stored now (SlicerStreamKeys.keyOfSlicer), read when its
   * task starts so a rotation's RESTART runs with the new key; undefined when the slicer is gone.
   */
  streamKeyOf: (slicerId: string) => Promise<string | undefined>;
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

/**
 * Carries out slicer tasks in the background. Tasks of one slicer run strictly in order (the
 * store only hands out the oldest unfinished task of a slicer); tasks of different slicers run
 * concurrently up to `concurrency`. Each state change is persisted before it is acted on, and
 * a task interrupted by a crash or shutdown is resumed from its expired lease, or failed with a
 * reason once it has used up `maxAttempts`.
 */
export class SlicerTaskRunner {
  private readonly store: SlicerTaskStore;
  private readonly leaseMs: number;
  private readonly maxAttempts: number;
  private readonly work: LeasedWork<ClaimedTask>;

  constructor(private readonly options: TaskRunnerOptions) {
    this.store = options.store;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.maxAttempts = options.maxAttempts ?? 3;
    const { store, clock, ownerId } = options;
    this.work = new LeasedWork<ClaimedTask>({
      clock,
      log: options.log,
      noun: 'slicer task',
      concurrency: options.concurrency ?? 4,
      leaseMs: this.leaseMs,
      pollMs: options.pollMs === undefined ? 1_000 : options.pollMs,
      claim: () => store.claimNextTask({ owner: ownerId, now: clock.now(), leaseMs: this.leaseMs }),
      keyOf: (task) => task.id,
      run: (task, controller) => this.execute(task, controller),
      ...(options.exclusive ? { releaseHeld: () => store.releaseLeases(clock.now()) } : {}),
      resumedMessage: 'resuming slicer tasks interrupted by the previous shutdown',
    });
  }

  /** In exclusive mode takes back the tasks a previous process left IN_PROGRESS, then starts working. */
  start(): Promise<void> {
    return this.work.start();
  }

  /** Looks for work now (called after a task was enqueued). */
  notify(): void {
    this.work.notify();
  }

  /**
   * Looks for work now and resolves once this look is over: a task enqueued before the call
   * is then IN_PROGRESS if this runner could take it (a free slot, no older task of its
   * slicer unfinished), else still PENDING. Lets a change answer with the task's true state.
   */
  claimNow(): Promise<void> {
    return this.work.claimNow();
  }

  /** Tasks being carried out by this instance right now. */
  runningTaskIds(): string[] {
    return this.work.keys();
  }

  /**
   * Graceful shutdown: claims nothing more, aborts running provisioner calls and releases their
   * leases, so the next start (or another instance) resumes them at once.
   */
  stop(): Promise<void> {
    return this.work.stop();
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
    const renewal = keepLease({
      clock: this.options.clock,
      leaseMs: this.leaseMs,
      renew: (until) => this.store.renewLease(task.id, fence, until),
      onLost: () => {
        leaseLost = true;
        controller.abort();
      },
      onError: (err) => this.options.log.warn({ err, taskId: task.id }, 'could not renew a slicer task lease'),
    });
    let outcome: ProvisionOutcome;
    try {
      const streamKey = await this.options.streamKeyOf(task.slicerId);
      outcome =
        streamKey === undefined
          ? { kind: 'failed', reason: `Slicer ${task.slicerId} no longer exists` }
          : await provision(this.options.provisioner, {
              taskId: task.id,
              slicerId: task.slicerId,
              workspaceId: task.workspaceId,
              operation: task.operation,
              config: task.config,
              streamKey,
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
      if (this.work.stopping) {
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
}
