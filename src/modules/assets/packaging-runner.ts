import type { Clock } from '../../platform/clock.js';
import type { OperationalEventSink } from '../../platform/operational-events.js';
import { keepLease, LeasedWork, type RunnerLog } from '../../platform/leased-work.js';
import { readPackagedManifest, type PackagedManifest } from '../../platform/media/packaged-manifest.js';
import type { AssetFiles } from './asset-files.js';
import type { AssetPackager, PackagingOutcome } from './asset-packager.js';
import type { AssetJobStore, ClaimedJob, LeaseFence } from './asset-store.js';

export interface PackagingRunnerOptions {
  store: AssetJobStore;
  packager: AssetPackager;
  files: AssetFiles;
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
  /** Operational events: asset.ready and asset.failed as a job ends (webhooks). */
  events?: OperationalEventSink;
  /**
   * How often a running job looks whether its asset still exists (deleted through another
   * instance, the only news of it here). Default DELETION_CHECK_MS.
   */
  deletionCheckMs?: number;
}

/** A deletion through another instance stops the packaging here within this long (not a lease third). */
export const DELETION_CHECK_MS = 2_000;

/**
 * Packages uploaded assets in the background, at most `concurrency` at once. A job is claimed
 * under a lease (renewed while ffmpeg runs; fenced by its attempt number); every attempt starts
 * from scratch, after the previous attempt's leftovers (files and a still-running ffmpeg) are
 * removed. A graceful stop gives running jobs back to the queue; a crash leaves their leases to
 * expire (or, embedded, to be released on the next start). A job interrupted `maxAttempts` times
 * is failed rather than tried forever. While ffmpeg runs, the segments every rendition has are
 * linked into the asset's directory and the asset made `playable` (files first, then the state),
 * so it plays before it is ready; a failure or stop midway removes them with the rest.
 */
export class PackagingRunner {
  private readonly maxAttempts: number;
  private readonly work: LeasedWork<ClaimedJob>;
  /** Assets deleted here while their job runs: their files go, nothing is recorded. */
  private readonly cancelled = new Set<string>();

  constructor(private readonly options: PackagingRunnerOptions) {
    this.maxAttempts = options.maxAttempts ?? 3;
    const { store, clock, ownerId, leaseMs } = options;
    this.work = new LeasedWork<ClaimedJob>({
      clock,
      log: options.log,
      noun: 'packaging job',
      concurrency: options.concurrency,
      leaseMs,
      pollMs: options.pollMs,
      claim: () => store.claimNext({ owner: ownerId, now: clock.now(), leaseMs }),
      keyOf: (job) => job.assetId,
      run: (job, controller) => this.execute(job, controller).finally(() => this.cancelled.delete(job.assetId)),
      ...(options.exclusive ? { releaseHeld: () => store.releaseLeases(clock.now()) } : {}),
      resumedMessage: 'packaging again the assets interrupted by the previous shutdown',
    });
  }

  start(): Promise<void> {
    return this.work.start();
  }

  /** Looks for work now (after an upload). */
  notify(): void {
    this.work.notify();
  }

  /** Looks for work now and resolves once this look is over (an upload answers with the state that follows). */
  claimNow(): Promise<void> {
    return this.work.claimNow();
  }

  /** Jobs this instance is packaging right now. */
  runningCount(): number {
    return this.work.size;
  }

  /** Stops packaging an asset that was deleted (if this instance packages it) and waits until it stopped. */
  async cancel(assetId: string): Promise<void> {
    const job = this.work.get(assetId);
    if (!job) return;
    this.cancelled.add(assetId);
    job.controller.abort();
    await job.done;
  }

  /** Claims nothing more, stops running ffmpeg processes and gives their jobs back to the queue. */
  stop(): Promise<void> {
    return this.work.stop();
  }

  private async execute(job: ClaimedJob, controller: AbortController): Promise<void> {
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
    const renewal = keepLease({
      clock,
      leaseMs: this.options.leaseMs,
      renew: (until) => store.renewLease(assetId, fence, until),
      onLost: () => {
        leaseLost = true;
        controller.abort();
      },
      onError: (err) => log.warn({ err, assetId }, 'could not renew a packaging lease'),
    });
    // Deleted through another instance: the asset row is gone. Its ffmpeg stops at the next look.
    let deletedElsewhere = false;
    const deletion = everyInterval(clock, this.options.deletionCheckMs ?? DELETION_CHECK_MS, async () => {
      if (await store.exists(assetId)) return true;
      deletedElsewhere = true;
      controller.abort();
      return false;
    }, (err) => log.warn({ ...context, err }, 'could not look whether a packaged asset still exists'));
    let progressWrites = Promise.resolve();
    // Files of this attempt linked into the asset's directory for progressive playback.
    const placed = new Set<string>();
    let playableFailed = false;
    let playableSince: number | undefined;
    let outcome: PackagingOutcome;
    try {
      outcome = await this.options.packager.package({
        assetId,
        source: files.sourcePath(owner, assetId),
        ...attempt,
        signal: controller.signal,
        onProgress: (percent) => {
          progressWrites = progressWrites
            .then(() => store.setProgress(assetId, fence, percent, clock.now()))
            .then(() => undefined, (err: unknown) => log.warn({ ...context, err }, 'could not record packaging progress'));
        },
        // The files first, then the state: an asset is `playable` only once the edge can play it.
        onPlayable: (output) => {
          progressWrites = progressWrites
            .then(async () => {
              if (playableFailed || controller.signal.aborted) return;
              await files.publishProgressive(owner, assetId, attempt.workDir, output, placed);
              const { manifest } = output;
              const renditions = manifest.renditions.map(({ name, width, height, bandwidth }) => ({ name, width, height, bandwidth }));
              const written = await store.setPlayable(assetId, fence, { durationMs: Math.round(manifest.duration_s * 1000), renditions }, clock.now());
              if (written && playableSince === undefined) {
                playableSince = clock.now();
                log.info({ ...context, playable_s: manifest.duration_s }, 'asset playable while packaged');
              }
            })
            .catch((err: unknown) => {
              // Playing early is a bonus: packaging goes on, and the asset is played once ready.
              playableFailed = true;
              log.warn({ ...context, err }, 'could not make the asset playable while packaged');
            });
        },
      });
    } catch (err) {
      log.error({ ...context, err }, 'the packager threw');
      outcome = { kind: 'failed', reason: `Internal packaging error (asset ${assetId})` };
    } finally {
      renewal.stop();
      deletion.stop();
    }
    await progressWrites;

    const cancelled = this.cancelled.has(assetId) || deletedElsewhere;
    if (cancelled || leaseLost) {
      // Deleted (here or on another instance): its files go. Taken over: the new holder owns them.
      if (cancelled || !(await store.exists(assetId))) await files.removeAll(owner, assetId);
      else log.warn(context, 'lost the lease of a packaging job; another instance carries it on');
      return;
    }
    if (outcome.kind === 'aborted') {
      if (this.work.stopping) {
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
    // Ready means playable: what was written is read back the way the playback edge reads it.
    let manifest: PackagedManifest;
    try {
      manifest = await readPackagedManifest(attempt.workDir);
    } catch (err) {
      log.error({ ...context, err }, 'packaging wrote an asset the playback edge would refuse');
      await this.fail(job, fence, `Packaging produced an asset that cannot be played (${(err as Error).message})`);
      return;
    }
    await files.publish(owner, assetId, attempt.workDir);
    const renditions = manifest.renditions.map(({ name, width, height, bandwidth }) => ({ name, width, height, bandwidth }));
    // The output replaces the upload in the workspace's storage quota.
    const storedBytes = await files.packagedBytes(owner, assetId);
    const written = await store.finishReady(assetId, fence, { durationMs: Math.round(manifest.duration_s * 1000), renditions, storedBytes }, clock.now());
    if (written) {
      this.options.events?.emit(owner, 'asset.ready', { asset_id: assetId, duration_ms: Math.round(manifest.duration_s * 1000), renditions: renditions.map((r) => r.name) });
      await files.removeSource(owner, assetId);
      log.info({ ...context, duration_s: manifest.duration_s, renditions: renditions.map((r) => r.name) }, 'asset packaged');
    } else if (!(await store.exists(assetId))) {
      await files.removeAll(owner, assetId);
    }
  }

  private async fail(job: ClaimedJob, fence: LeaseFence, reason: string): Promise<void> {
    const { files } = this.options;
    // The upload is kept (issue 36: a failure on a busy machine deleted it): the output goes now, the
    // upload when the operator deletes the asset, or it is packaged again by POST /assets/<id>/retry.
    await files.removeOutputs(job.workspaceId, job.assetId);
    const kept = await files.sourceBytes(job.workspaceId, job.assetId);
    const written = await this.options.store.finishFailed(job.assetId, fence, reason, this.options.clock.now(), kept);
    if (!written) {
      // Deleted meanwhile (on another instance): its files go. Taken over: the new holder owns them.
      if (!(await this.options.store.exists(job.assetId))) await this.options.files.removeAll(job.workspaceId, job.assetId);
      return;
    }
    this.options.onFailed?.();
    this.options.events?.emit(job.workspaceId, 'asset.failed', { asset_id: job.assetId, reason });
    this.options.log.warn({ assetId: job.assetId, owner: job.workspaceId, reason }, 'asset packaging failed');
  }
}

/**
 * Calls `check` every `ms` of the clock's time until it answers false or `stop` is called; a
 * check that throws is reported and tried again at the next interval.
 */
function everyInterval(clock: Clock, ms: number, check: () => Promise<boolean>, onError: (err: unknown) => void): { stop(): void } {
  let stopped = false;
  let cancel: (() => void) | undefined;
  const schedule = (): void => {
    if (stopped) return;
    cancel = clock.setTimer(() => {
      check().then(
        (again) => {
          if (again) schedule();
        },
        (err: unknown) => {
          onError(err);
          schedule();
        },
      );
    }, ms);
  };
  schedule();
  return {
    stop: () => {
      stopped = true;
      cancel?.();
    },
  };
}
