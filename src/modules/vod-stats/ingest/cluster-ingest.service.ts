import type { Clock } from '../../../platform/clock.js';
import type { ErrorReportSink } from '../../../platform/error-report-sink.js';
import { AppError } from '../../../platform/errors.js';
import { parseEventBatch } from './event-batch.js';
import type { EventBatchKind } from './event-batch.js';
import type { IngestResult, PlaybackEvent } from '../events.schema.js';
import { playbackErrorMeaning } from '../playback-error-codes.js';
import type { PostgresEventJournal } from '../journal/postgres-journal.js';
import type { RedisStatsStore } from '../store/redis-stats-store.js';

/** What ingest needs from the statistics store (RedisStatsStore; a fake in tests). */
export type CountingStore = Pick<RedisStatsStore, 'count'>;

export interface ClusterIngestOptions {
  store: CountingStore;
  journal: PostgresEventJournal;
  clock: Clock;
  errorReports: ErrorReportSink;
  onError?: (message: string, error: unknown) => void;
  /** Journaled batches held for counting (Redis unreachable, or a rebuild running) before ingest answers 503. Default 2000. */
  maxUncounted?: number;
  /** How often held batches are tried again. Default 1 s. */
  retryMs?: number;
}

export interface IngestAuth {
  owner: string;
  anyOwner: boolean;
}

interface JournaledBatch {
  seq: number;
  receivedAt: number;
  events: readonly PlaybackEvent[];
}

/**
 * Statistics ingest in cluster mode: parse, journal in PostgreSQL (committed before the 202),
 * then count in Redis under the batch's journal seq, so a batch is counted once however often
 * it is tried (retries, sweeps of a dead instance, a rebuild). If counting fails after the
 * commit the batch is still accepted: it is held and counted as soon as Redis answers.
 */
export class ClusterIngestService {
  private readonly store: CountingStore;
  private readonly journal: PostgresEventJournal;
  private readonly clock: Clock;
  private readonly errorReports: ErrorReportSink;
  private readonly onError: (message: string, error: unknown) => void;
  private readonly maxUncounted: number;
  private readonly retryMs: number;
  /** Receipt times of batches between parse and counted. */
  private readonly open = new Map<object, number>();
  /** Journaled, not counted yet (by seq). */
  private readonly uncounted = new Map<number, JournaledBatch>();
  private cancelRetry: (() => void) | undefined;
  private retrying: Promise<void> | undefined;
  private closed = false;
  /** Running totals, for metrics. */
  readonly totals = { batches: 0, accepted: 0, rejected: 0 };

  constructor(options: ClusterIngestOptions) {
    this.store = options.store;
    this.journal = options.journal;
    this.clock = options.clock;
    this.errorReports = options.errorReports;
    this.onError = options.onError ?? (() => undefined);
    this.maxUncounted = options.maxUncounted ?? 2000;
    this.retryMs = options.retryMs ?? 1000;
  }

  async ingest(body: Buffer, kind: EventBatchKind, auth: IngestAuth): Promise<IngestResult> {
    if (this.closed) throw new AppError('service_unavailable', 'The server is shutting down; retry on another instance');
    if (this.uncounted.size >= this.maxUncounted) {
      throw new AppError('service_unavailable', 'Statistics cannot be counted right now (Redis unreachable or rebuilding); retry shortly');
    }
    const receivedAt = this.clock.now();
    const { events, rejected } = parseEventBatch(body, kind, { authOwner: auth.owner, anyOwner: auth.anyOwner, now: receivedAt });
    this.totals.rejected += rejected.length;
    if (events.length === 0) return { accepted: 0, rejected };
    const token = {};
    this.open.set(token, receivedAt);
    try {
      let seq: number;
      try {
        seq = await this.journal.appendNew({ receivedAt, kind, authOwner: auth.owner, anyOwner: auth.anyOwner, body, events: events.length });
      } catch (error) {
        throw new AppError('service_unavailable', 'The events could not be stored durably; retry the batch', { cause: error });
      }
      await this.countOrHold({ seq, receivedAt, events });
    } finally {
      this.open.delete(token);
    }
    this.totals.batches++;
    this.totals.accepted += events.length;
    reportErrors(this.errorReports, events);
    return { accepted: events.length, rejected };
  }

  private async countOrHold(batch: JournaledBatch): Promise<void> {
    try {
      if ((await this.store.count(batch.events, batch.receivedAt, { batchKey: String(batch.seq) })) === 'counted') return;
    } catch (error) {
      this.onError('vod-stats: a journaled batch could not be counted in Redis; it is held and retried', error);
    }
    this.uncounted.set(batch.seq, batch);
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.cancelRetry !== undefined || this.retrying !== undefined) return;
    this.cancelRetry = this.clock.setTimer(() => {
      this.cancelRetry = undefined;
      this.retrying = this.retryHeld().finally(() => {
        this.retrying = undefined;
        if (this.uncounted.size > 0 && !this.closed) this.scheduleRetry();
      });
    }, this.retryMs);
  }

  /** Counts the held batches in journal order; stops at the first that still cannot be counted. */
  async retryHeld(): Promise<void> {
    for (const seq of [...this.uncounted.keys()].sort((a, b) => a - b)) {
      const batch = this.uncounted.get(seq) as JournaledBatch;
      try {
        if ((await this.store.count(batch.events, batch.receivedAt, { batchKey: String(seq) })) === 'busy') return;
      } catch {
        return;
      }
      this.uncounted.delete(seq);
    }
  }

  /**
   * Every batch this instance journaled with a receipt time before the returned one has been
   * counted: what another instance must count for it if it dies (see ClusterNode).
   */
  countedBefore(): number {
    let before = this.clock.now();
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
    await this.journal.close();
  }
}

/** Accepted error events go to Error Reporting (after the journal commit, like the embedded pipeline). */
const reportErrors = (sink: ErrorReportSink, events: readonly PlaybackEvent[]): void => {
  for (const e of events) {
    if (e.type !== 'error') continue;
    const errorCode = e.error_code ?? 999;
    sink.submit({
      owner: e.owner,
      url: e.url ?? '',
      ip: e.ip ?? '',
      code: e.http_status ?? 400,
      ua: e.ua ?? '',
      msg: e.msg ?? playbackErrorMeaning[errorCode] ?? 'Unknown',
      timestamp: Math.floor(e.ts / 1000),
      errorCode,
    });
  }
};
