import type { Clock } from '../../../platform/clock.js';
import type { ErrorReportSink } from '../../../platform/error-report-sink.js';
import { AppError } from '../../../platform/errors.js';
import type { EventBatchKind } from './event-batch.js';
import { BatchIntake, ownWorkspaceOnly, type IngestOwners, type EventIngest, type IngestAuth, type IngestTotals } from './event-ingest.js';
import type { IngestResult, PlaybackEvent } from '../events.schema.js';
import type { ClusterJournal } from '../journal/cluster-journal.js';
import type { RedisStatsStore } from '../store/redis-stats-store.js';

/** What ingest needs from the statistics store (RedisStatsStore; a fake in tests). */
export type CountingStore = Pick<RedisStatsStore, 'count'>;

export interface ClusterIngestOptions {
  store: CountingStore;
  journal: ClusterJournal;
  clock: Clock;
  errorReports: ErrorReportSink;
  /** Which workspaces ingest keys may submit for (default: their own only). */
  owners?: IngestOwners;
  onError?: (message: string, error: unknown) => void;
  /** Journaled batches held for counting (Redis unreachable, or a rebuild running) before ingest answers 503. Default 2000. */
  maxUncounted?: number;
  /** How often held batches are tried again. Default 1 s. */
  retryMs?: number;
  /** Whether Redis may be counted into now (its statistics are bound to this journal). Default: always. */
  canCount?: () => boolean;
}

interface JournaledBatch {
  seq: number;
  /** The key Redis marks the batch counted under (unique to its journal row). */
  batchKey: string;
  receivedAt: number;
  events: readonly PlaybackEvent[];
}

/** Held batches report no drops: they are counted later, and drops then show in the store's counter only. */
const NOTHING_KNOWN_DROPPED: readonly number[] = [];

/**
 * Statistics ingest in cluster mode: parse, journal in PostgreSQL (committed before the 202),
 * then count in Redis under the batch's journal seq, so a batch is counted once however often
 * it is tried (retries, sweeps of a dead instance, a rebuild). If counting fails after the
 * commit the batch is still accepted: it is held and counted as soon as Redis answers.
 */
export class ClusterIngestService implements EventIngest {
  private readonly o: Required<ClusterIngestOptions>;
  private readonly intake: BatchIntake;
  /** Receipt times of batches between parse and counted. */
  private readonly open = new Map<object, number>();
  /** Journaled, not counted yet (by seq). */
  private readonly uncounted = new Map<number, JournaledBatch>();
  private cancelRetry: (() => void) | undefined;
  private retrying: Promise<void> | undefined;
  private closed = false;

  constructor(options: ClusterIngestOptions) {
    this.o = { ...options, owners: options.owners ?? ownWorkspaceOnly, canCount: options.canCount ?? (() => true), onError: options.onError ?? (() => undefined), maxUncounted: options.maxUncounted ?? 2000, retryMs: options.retryMs ?? 1000 };
    this.intake = new BatchIntake(options.clock, options.errorReports, this.o.owners, { keepSessionIds: true });
  }

  /** Running totals (this instance's), for metrics. */
  get totals(): Readonly<IngestTotals> {
    return this.intake.totals;
  }

  async ingest(body: Buffer, kind: EventBatchKind, auth: IngestAuth): Promise<IngestResult> {
    if (this.closed) throw new AppError('service_unavailable', 'The server is shutting down; retry on another instance');
    if (this.uncounted.size >= this.o.maxUncounted) {
      throw new AppError('service_unavailable', 'Statistics cannot be counted right now (Redis unreachable, rebuilding, or not bound to this journal); retry shortly');
    }
    const batch = await this.intake.receive(body, kind, auth);
    const { receivedAt, events } = batch;
    if (events.length === 0) return this.intake.nothingAccepted(batch);
    const token = {};
    this.open.set(token, receivedAt);
    let dropped: readonly number[];
    try {
      let journaled: { seq: number; batchKey: string };
      try {
        journaled = await this.o.journal.appendNew({ receivedAt, kind, authOwner: auth.owner, owners: batch.owners, body, events: events.length });
      } catch (error) {
        throw new AppError('service_unavailable', 'The events could not be stored durably; retry the batch', { cause: error });
      }
      // Committed: from here on nothing may fail the request (a retry would count twice).
      dropped = await this.countOrHold({ ...journaled, receivedAt, events: events.toEvents() });
    } finally {
      this.open.delete(token);
    }
    return this.intake.accept(batch, dropped);
  }

  /** Counts a committed batch, or holds it for a retry; never throws. Resolves with the events the store dropped. */
  private async countOrHold(batch: JournaledBatch): Promise<readonly number[]> {
    try {
      const counted = this.o.canCount() ? await this.o.store.count(batch.events, batch.receivedAt, { batchKey: batch.batchKey }) : 'busy';
      if (counted !== 'busy') return counted.dropped;
    } catch (error) {
      this.o.onError('vod-stats: a journaled batch could not be counted in Redis; it is held and retried', error);
    }
    this.uncounted.set(batch.seq, batch);
    this.scheduleRetry();
    return NOTHING_KNOWN_DROPPED;
  }

  private scheduleRetry(): void {
    if (this.cancelRetry !== undefined || this.retrying !== undefined) return;
    this.cancelRetry = this.o.clock.setTimer(() => {
      this.cancelRetry = undefined;
      this.retrying = this.retryHeld().finally(() => {
        this.retrying = undefined;
        if (this.uncounted.size > 0 && !this.closed) this.scheduleRetry();
      });
    }, this.o.retryMs);
  }

  /** Counts the held batches in journal order; stops at the first that still cannot be counted. */
  async retryHeld(): Promise<void> {
    for (const seq of [...this.uncounted.keys()].sort((a, b) => a - b)) {
      const batch = this.uncounted.get(seq) as JournaledBatch;
      if (!this.o.canCount()) return;
      try {
        if ((await this.o.store.count(batch.events, batch.receivedAt, { batchKey: batch.batchKey })) === 'busy') return;
      } catch {
        return;
      }
      this.uncounted.delete(seq);
    }
  }

  /**
   * Every batch this instance journaled with a receipt time before the returned one has been
   * counted. Reported in each heartbeat: a survivor counts the rest if this instance dies
   * (vod-stats.cluster.ts).
   */
  countedBefore(): number {
    let before = this.o.clock.now();
    for (const at of this.open.values()) before = Math.min(before, at);
    for (const batch of this.uncounted.values()) before = Math.min(before, batch.receivedAt);
    return before;
  }

  /** Batches journaled here and not counted yet (held for retry). */
  heldBatches(): number {
    return this.uncounted.size;
  }

  /** Stops taking batches, waits for those in flight, tries the held ones once more. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelRetry?.();
    this.cancelRetry = undefined;
    while (this.open.size > 0) await new Promise((resolve) => setImmediate(resolve));
    await this.retrying;
    if (this.uncounted.size > 0) await this.retryHeld();
    await this.o.journal.close();
  }
}
