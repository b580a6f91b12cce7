import type { Clock } from '../../platform/clock.js';
import type { AssetPackager, PackagingOutcome } from './asset-packager.js';
import type { AssetJobStore, ClaimedJob, LeaseFence } from './asset-store.js';
import type { MediaLibrary } from './media-library.js';

/** The few logger methods the runner uses (pino's Logger fits). */
export interface RunnerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface PackagingRunnerOptions {
  store: AssetJobStore;
  packager: AssetPackager;
  files: MediaLibrary;
  clock: Clock;
  log: RunnerLog;
  /** Names this runner in job leases; unique per process. */
  ownerId: string;
  /** True when this runner is the only one on its store (embedded mode): on start it takes back every held job at once. */
  exclusive: boolean;
  /** Jobs packaged at once (PLAYLINE_PACKAGING_CONCURRENCY). */
  concurrency: number;
  /** How long a claim stays valid without renewal; renewed every third of it. */
  leaseMs: number;
  /** How often an idle runner looks for work enqueued elsewhere; null when only its own enqueues create work. */
  pollMs: number | null;
  /** Claims of one job before it is failed instead of packaged once more. Default 3. */
  maxAttempts?: number;
  /** Called for each job that ends failed (metrics). */
  onFailed?: () => void;
}

interface RunningJob {
  controller: AbortController;
  /** Set when the asset was deleted here: its files go, nothing is recorded. */
  cancelled: boolean;
  done: Promise<void>;
}

/**
 * Packages uploaded assets in the background, at most `concurrency` at once. A job is claimed
 * under a lease (renewed while ffmpeg runs; fenced by its attempt number); every attempt starts
 * from scratch, after the previous attempt's leftovers (files and a still-running ffmpeg) are
 * removed. A graceful stop gives running jobs back to the queue; a crash leaves their leases to
 * expire (or, embedded, to be released on the next start). A job interrupted `maxAttempts` times
 * is failed rather than tried forever.
 */
export class PackagingRunner {
  private readonly maxAttempts: number;
  private readonly running = new Map<string, RunningJob>();
  private started = false;
  private stopping = false;
  private pumping: Promise<void> | undefined;
  private pumpAgain = false;
  private cancelPoll: (() => void) | undefined;

  constructor(private readonly options: PackagingRunnerOptions) {
    this.maxAttempts = options.maxAttempts ?? 3;
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const released = this.options.exclusive ? await this.options.store.releaseLeases(this.options.clock.now()) : 0;
    if (released > 0) this.options.log.warn({ jobs: released }, 'packaging again the assets interrupted by the previous shutdown');
    this.notify();
  }

  /** Looks for work now (after an upload). */
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

  /** Looks for work now and resolves once this look is over (an upload answers with the state that follows). */
  async claimNow(): Promise<void> {
    this.notify();
    await this.pumping;
  }

  /** Jobs this instance is packaging right now. */
  runningCount(): number {
    return this.running.size;
  }

  /** Stops packaging an asset that was deleted (if this instance packages it) and waits until it stopped. */
  async cancel(assetId: string): Promise<void> {
    const job = this.running.get(assetId);
    if (!job) return;
    job.cancelled = true;
    job.controller.abort();
    await job.done;
  }

  /** Claims nothing more, stops running ffmpeg processes and gives their jobs back to the queue. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.cancelPoll?.();
    this.cancelPoll = undefined;
    await this.pumping;
    const running = [...this.running.values()];
    for (const job of running) job.controller.abort();
    await Promise.all(running.map((j) => j.done));
  }

  private async pump(): Promise<void> {
    do {
      this.pumpAgain = false;
      while (!this.stopping && this.running.size < this.options.concurrency) {
        let claimed: ClaimedJob | undefined;
        try {
          claimed = await this.options.store.claimNext({ owner: this.options.ownerId, now: this.options.clock.now(), leaseMs: this.options.leaseMs });
        } catch (err) {
          this.options.log.error({ err }, 'could not claim a packaging job; retrying soon');
          this.schedulePoll(this.options.pollMs ?? 1_000);
          return;
        }
        if (!claimed) break;
        this.launch(claimed);
      }
    } while (this.pumpAgain && !this.stopping);
  }

  private schedulePoll(ms: number | null = this.options.pollMs): void {
    if (this.stopping || this.cancelPoll || ms === null) return;
    this.cancelPoll = this.options.clock.setTimer(() => {
      this.cancelPoll = undefined;
      this.notify();
    }, ms);
  }

  private launch(job: ClaimedJob): void {
    const entry: RunningJob = { controller: new AbortController(), cancelled: false, done: Promise.resolve() };
    entry.done = this.execute(job, entry)
      .catch((err: unknown) => {
        // The job keeps its lease until it expires, then is packaged again: nothing hangs.
        this.options.log.error({ err, assetId: job.assetId }, 'packaging bookkeeping failed; the job will be taken up again');
        this.schedulePoll(this.options.leaseMs);
      })
      .finally(() => {
        this.running.delete(job.assetId);
        this.notify();
      });
    this.running.set(job.assetId, entry);
  }

  private async execute(job: ClaimedJob, entry: RunningJob): Promise<void> {
    const { store, files, clock, log } = this.options;
    const { assetId, workspaceId: owner } = job;
    const fence: LeaseFence = { owner: this.options.ownerId, attempt: job.attempts };
    const context = { assetId, owner, attempt: job.attempts };

    if (job.attempts > this.maxAttempts) {
      const interruptions = job.attempts - 1;
      await this.fail(job, fence, `Packaging was interrupted ${interruptions} times (service restarts); not tried again`);
      return;
    }
    if (job.attempts > 1) log.info(context, 'packaging again from scratch after an interruption');
    const attempt = await files.prepareAttempt(owner, assetId, job.attempts);
    if (!(await files.hasSource(owner, assetId))) {
      await this.fail(job, fence, 'The upload is missing from the media directory');
      return;
    }

    let leaseLost = false;
    const renewal = this.keepLease(assetId, fence, () => {
      leaseLost = true;
      entry.controller.abort();
    });
    let progressWrites = Promise.resolve();
    let outcome: PackagingOutcome;
    try {
      outcome = await this.options.packager.package({
        assetId,
        source: files.sourcePath(owner, assetId),
        ...attempt,
        signal: entry.controller.signal,
        onProgress: (percent) => {
          progressWrites = progressWrites
            .then(() => store.setProgress(assetId, fence, percent, clock.now()))
            .then(() => undefined, (err: unknown) => log.warn({ ...context, err }, 'could not record packaging progress'));
        },
      });
    } catch (err) {
      log.error({ ...context, err }, 'the packager threw');
      outcome = { kind: 'failed', reason: `Internal packaging error (asset ${assetId})` };
    } finally {
      renewal.stop();
    }
    await progressWrites;

    if (entry.cancelled || leaseLost) {
      // Deleted (here or on another instance): its files go. Taken over: the new holder owns them.
      if (entry.cancelled || !(await store.exists(assetId))) await files.removeAll(owner, assetId);
      else log.warn(context, 'lost the lease of a packaging job; another instance carries it on');
      return;
    }
    if (outcome.kind === 'aborted') {
      if (this.stopping) {
        await files.removeOutputs(owner, assetId);
        await store.releaseLease(assetId, fence, clock.now());
        return;
      }
      outcome = { kind: 'failed', reason: 'Packaging was stopped' };
    }
    if (outcome.kind === 'failed') {
      await this.fail(job, fence, outcome.reason);
      return;
    }
    const manifest = outcome.manifest;
    await files.publish(owner, assetId, attempt.workDir);
    const renditions = manifest.renditions.map(({ name, width, height, bandwidth }) => ({ name, width, height, bandwidth }));
    const written = await store.finishReady(assetId, fence, { durationMs: Math.round(manifest.duration_s * 1000), renditions }, clock.now());
    if (written) {
      await files.removeSource(owner, assetId);
      log.info({ ...context, duration_s: manifest.duration_s, renditions: renditions.map((r) => r.name) }, 'asset packaged');
    } else if (!(await store.exists(assetId))) {
      await files.removeAll(owner, assetId);
    }
  }

  private async fail(job: ClaimedJob, fence: LeaseFence, reason: string): Promise<void> {
    const written = await this.options.store.finishFailed(job.assetId, fence, reason, this.options.clock.now());
    if (!written) {
      // Deleted meanwhile (on another instance): its files go. Taken over: the new holder owns them.
      if (!(await this.options.store.exists(job.assetId))) await this.options.files.removeAll(job.workspaceId, job.assetId);
      return;
    }
    this.options.onFailed?.();
    // A failed asset keeps nothing on disk: neither the upload nor partial output.
    await this.options.files.removeAll(job.workspaceId, job.assetId);
    this.options.log.warn({ assetId: job.assetId, owner: job.workspaceId, reason }, 'asset packaging failed');
  }

  /** Renews the lease every third of its length until stopped; calls `onLost` once it was taken or deleted. */
  private keepLease(assetId: string, fence: LeaseFence, onLost: () => void): { stop(): void } {
    const { clock, store, leaseMs, log } = this.options;
    let stopped = false;
    let cancel: (() => void) | undefined;
    const schedule = (): void => {
      if (stopped) return;
      cancel = clock.setTimer(() => {
        store
          .renewLease(assetId, fence, clock.now() + leaseMs)
          .then((kept) => {
            if (kept) schedule();
            else if (!stopped) onLost();
          })
          .catch((err: unknown) => {
            log.warn({ err, assetId }, 'could not renew a packaging lease');
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
}
