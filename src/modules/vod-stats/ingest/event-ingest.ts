import type { Clock } from '../../../platform/clock.js';
import type { ErrorReportSink, PlaybackErrorReport } from '../../../platform/error-report-sink.js';
import { MAX_LISTED_REJECTIONS, type EventRejection, type IngestResult } from '../events.schema.js';
import { TYPE, type EventColumns } from '../event-columns.js';
import type { JournalBatch } from '../journal/journal.js';
import { playbackErrorMeaning } from '../playback-error-codes.js';
import { parseEventColumns, type ColumnOptions, type EventBatchContext, type EventBatchKind, type ListedRejection } from './event-batch.js';
import { AllowedOwners } from './event-fields.js';

/** Who submits a batch, and so which workspaces its events may name. */
export interface IngestAuth {
  /** The signing workspace (the playback edge names itself). */
  owner: string;
  /**
   * `api`: an API key, events of its own workspace only. `ingest`: an ingest key (playback
   * servers), its own workspace and the workspaces that granted it. `internal`: the playback
   * edge, any workspace (it has checked the playback URL).
   */
  kind: 'api' | 'ingest' | 'internal';
}

/**
 * Which workspaces an ingest key may submit events for (ingest grants, kept by the workspaces
 * module): the port through which ingest learns it, never reading the database itself.
 */
export interface IngestOwners {
  /** The workspaces the ingest keys of `owner` may submit for: itself and those that granted it. */
  allowedOwners(owner: string): Promise<ReadonlySet<string>>;
  /** The workspaces among `ids` that exist. */
  existing(ids: readonly string[]): Promise<ReadonlySet<string>>;
}

/** Ingest keys submit for their own workspace only (tests, and before grants are wired). */
export const ownWorkspaceOnly: IngestOwners = {
  allowedOwners: (owner) => Promise.resolve(new Set([owner])),
  existing: () => Promise.resolve(new Set()),
};

/**
 * Statistics ingest, whatever the backends: what `POST /monitoring/events` and the playback
 * edge call. Implemented by the embedded pipeline (EventIngestService: file journal, memory
 * store) and the cluster pipeline (ClusterIngestService: PostgreSQL journal, Redis store).
 * Resolves once the accepted events are durable and counted (or, in a cluster whose Redis
 * cannot count right now, held for counting); rejects with an AppError otherwise. A batch is
 * committed whole or not at all: once it is, nothing fails any more.
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

/** Accepted `error` event `i` as Error Reporting receives it (DESIGN: code, msg, timestamp). */
export const errorReportAt = (columns: EventColumns, i: number): PlaybackErrorReport => {
  const errorCode = columns.code[i] as number;
  const details = columns.details?.get(i);
  return {
    owner: columns.owner[i] as string,
    url: details?.url ?? '',
    ip: details?.ip ?? '',
    // Playback error codes are request validation failures: 400 unless the edge said otherwise.
    code: details?.http_status ?? 400,
    ua: details?.ua ?? '',
    msg: details?.msg ?? playbackErrorMeaning[errorCode] ?? 'Unknown',
    timestamp: Math.floor((columns.ts[i] as number) / 1000),
    errorCode,
  };
};

/** A batch as parsed at its receipt time. */
export interface ReceivedBatch {
  receivedAt: number;
  /** The accepted events (their `index` column: where each was in the batch, for rejections reported after counting). */
  events: EventColumns;
  rejected: ListedRejection[];
  rejectedCount: number;
  /** The workspaces its events could name, as the journal records it for replay (null: any). */
  owners: readonly string[] | null;
}

/** How a journaled batch is parsed again on replay: at its receipt time, with the owners it was allowed. */
export const replayContext = (batch: Pick<JournalBatch, 'receivedAt' | 'owners'>): EventBatchContext => ({
  now: batch.receivedAt,
  owners: batch.owners === null ? null : new AllowedOwners(new Set(batch.owners)),
  foreignOwnerCode: 'owner_mismatch',
});

const ASSET_LIMIT_DETAIL = "the workspace holds the maximum number of assets in its statistics; events for new assets are dropped";
const UNKNOWN_OWNER_DETAIL = 'owner is not a known workspace';

/** The listed rejections of the parse and of counting (asset limit), merged by index; the first few only. */
const listRejections = (parsed: readonly ListedRejection[], dropped: readonly number[], indexes: Int32Array): EventRejection[] => {
  const out: EventRejection[] = [];
  let p = 0;
  let d = 0;
  while (out.length < MAX_LISTED_REJECTIONS && (p < parsed.length || d < dropped.length)) {
    const fromParse = parsed[p];
    const droppedIndex = d < dropped.length ? (indexes[dropped[d] as number] as number) : Infinity;
    if (fromParse !== undefined && fromParse.index < droppedIndex) {
      out.push({ index: fromParse.index, code: fromParse.code, detail: fromParse.detail });
      p++;
    } else {
      out.push({ index: droppedIndex, code: 'asset_limit_reached', detail: ASSET_LIMIT_DETAIL });
      d++;
    }
  }
  return out;
};

/**
 * What both pipelines do around their own "make durable, then count": parse at the receipt
 * time with the submitter's authority, keep the totals, and once a batch is accepted hand its
 * counted error events to Error Reporting (after the journal, so a report never outlives a lost
 * batch) and answer.
 */
export class BatchIntake {
  readonly totals: IngestTotals = { batches: 0, accepted: 0, rejected: 0 };

  constructor(
    private readonly clock: Clock,
    private readonly errorReports: ErrorReportSink,
    private readonly owners: IngestOwners,
    /** How batches are held: with their session ids (a store that counts by id: the cluster's), and where ids' long-lived copies are. */
    private readonly columns: ColumnOptions = {},
  ) {}

  /**
   * Parses a batch at its receipt time with what its submitter may name: an API key its own
   * workspace, an ingest key its own and the granting ones (the journal records the owners
   * accepted, so a replay re-derives the same events whatever the grants are later), the
   * playback edge any. Foreign owners listed are told apart as unknown or not allowed.
   */
  async receive(body: Buffer, kind: EventBatchKind, auth: IngestAuth): Promise<ReceivedBatch> {
    const receivedAt = this.clock.now();
    const ctx: EventBatchContext =
      auth.kind === 'api'
        ? { now: receivedAt, owners: new AllowedOwners(new Set([auth.owner])), foreignOwnerCode: 'owner_mismatch' }
        : auth.kind === 'ingest'
          ? { now: receivedAt, owners: new AllowedOwners(await this.owners.allowedOwners(auth.owner)), foreignOwnerCode: 'owner_not_allowed' }
          : { now: receivedAt, owners: null, foreignOwnerCode: 'owner_mismatch' };
    const { columns, rejected, rejectedCount } = await parseEventColumns(body, kind, ctx, this.columns);
    this.totals.rejected += rejectedCount;
    if (auth.kind === 'ingest') await this.markUnknownOwners(rejected);
    const owners = auth.kind === 'api' ? [auth.owner] : auth.kind === 'ingest' ? columns.owners : null;
    return { receivedAt, events: columns, rejected, rejectedCount, owners };
  }

  /** Listed `owner_not_allowed` rejections naming no workspace at all become `unknown_owner`. */
  private async markUnknownOwners(rejected: ListedRejection[]): Promise<void> {
    const foreign = [...new Set(rejected.flatMap((r) => (r.code === 'owner_not_allowed' && r.owner !== undefined ? [r.owner] : [])))];
    if (foreign.length === 0) return;
    const existing = await this.owners.existing(foreign);
    for (const r of rejected) {
      if (r.code === 'owner_not_allowed' && r.owner !== undefined && !existing.has(r.owner)) {
        r.code = 'unknown_owner';
        r.detail = UNKNOWN_OWNER_DETAIL;
      }
    }
  }

  /** The answer to a batch with nothing to journal. */
  nothingAccepted(batch: ReceivedBatch): IngestResult {
    return { accepted: 0, rejected: listRejections(batch.rejected, [], batch.events.index), rejected_count: batch.rejectedCount };
  }

  /**
   * The batch is durable and counted (or held for counting): totals, error reports, the answer.
   * `dropped`: positions in `batch.events` the store did not count (asset limit), ascending.
   * Never throws: the batch is committed, so no error may be answered for it any more.
   */
  accept(batch: ReceivedBatch, dropped: readonly number[] = []): IngestResult {
    const accepted = batch.events.length - dropped.length;
    this.totals.batches++;
    this.totals.accepted += accepted;
    this.totals.rejected += dropped.length;
    const { events } = batch;
    let next = 0;
    for (let i = 0; i < events.length; i++) {
      if (dropped[next] === i) {
        next++;
        continue;
      }
      if (events.type[i] !== TYPE.error) continue;
      try {
        this.errorReports.submit(errorReportAt(events, i));
      } catch {
        // Best effort by contract (submit never throws); the statistics are what was promised.
      }
    }
    return {
      accepted,
      rejected: listRejections(batch.rejected, dropped, batch.events.index),
      rejected_count: batch.rejectedCount + dropped.length,
    };
  }
}
