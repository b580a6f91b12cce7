import type { Clock } from '../../../platform/clock.js';
import type { ErrorReportSink, PlaybackErrorReport } from '../../../platform/error-report-sink.js';
import type { IngestResult, PlaybackEvent } from '../events.schema.js';
import { playbackErrorMeaning } from '../playback-error-codes.js';
import { parseEventBatch, type EventBatchKind } from './event-batch.js';

/** Who submits a batch: the signing workspace, and whether it may submit for any workspace. */
export interface IngestAuth {
  owner: string;
  /** Ingest keys submit events for any workspace. */
  anyOwner: boolean;
}

/**
 * Statistics ingest, whatever the backends: what `POST /monitoring/events` and the playback
 * edge call. Implemented by the embedded pipeline (EventIngestService: file journal, memory
 * store) and the cluster pipeline (ClusterIngestService: PostgreSQL journal, Redis store).
 * Resolves once the accepted events are durable; rejects with an AppError otherwise.
 */
export interface EventIngest {
  ingest(body: Buffer, kind: EventBatchKind, auth: IngestAuth): Promise<IngestResult>;
}

/** Running totals of one pipeline, for metrics. */
export interface IngestTotals {
  batches: number;
  accepted: number;
  rejected: number;
}

/** An accepted `error` event as Error Reporting receives it (DESIGN: code, msg, timestamp). */
export const toErrorReport = (e: PlaybackEvent): PlaybackErrorReport => {
  const errorCode = e.error_code ?? 999;
  return {
    owner: e.owner,
    url: e.url ?? '',
    ip: e.ip ?? '',
    // Playback error codes are request validation failures: 400 unless the edge said otherwise.
    code: e.http_status ?? 400,
    ua: e.ua ?? '',
    msg: e.msg ?? playbackErrorMeaning[errorCode] ?? 'Unknown',
    timestamp: Math.floor(e.ts / 1000),
    errorCode,
  };
};

/** A batch as parsed at its receipt time. */
export interface ReceivedBatch {
  receivedAt: number;
  events: PlaybackEvent[];
  rejected: IngestResult['rejected'];
}

/**
 * What both pipelines do around their own "make durable, then count": parse at the receipt
 * time with the submitter's authority, keep the totals, and once a batch is accepted hand its
 * error events to Error Reporting (after the journal, so a report never outlives a lost batch).
 */
export class BatchIntake {
  readonly totals: IngestTotals = { batches: 0, accepted: 0, rejected: 0 };

  constructor(
    private readonly clock: Clock,
    private readonly errorReports: ErrorReportSink,
  ) {}

  receive(body: Buffer, kind: EventBatchKind, auth: IngestAuth): ReceivedBatch {
    const receivedAt = this.clock.now();
    const { events, rejected } = parseEventBatch(body, kind, { authOwner: auth.owner, anyOwner: auth.anyOwner, now: receivedAt });
    this.totals.rejected += rejected.length;
    return { receivedAt, events, rejected };
  }

  /** The batch is durable and counted (or held for counting): totals, error reports, the answer. */
  accept(batch: ReceivedBatch): IngestResult {
    this.totals.batches++;
    this.totals.accepted += batch.events.length;
    for (const e of batch.events) if (e.type === 'error') this.errorReports.submit(toErrorReport(e));
    return { accepted: batch.events.length, rejected: batch.rejected };
  }
}
