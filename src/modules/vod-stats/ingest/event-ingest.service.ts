import type { Clock } from '../../../platform/clock.js';
import type { ErrorReportSink } from '../../../platform/error-report-sink.js';
import { AppError } from '../../../platform/errors.js';
import { parseEventColumnsSync } from './event-batch.js';
import type { EventBatchKind } from './event-batch.js';
import { BatchIntake, ownWorkspaceOnly, type IngestOwners, replayContext, type EventIngest, type IngestAuth, type IngestTotals } from './event-ingest.js';
import type { IngestResult } from '../events.schema.js';
import type { EventColumns, IdTable } from '../event-columns.js';
import type { EventJournal, ReplayResult } from '../journal/journal.js';
import { SNAPSHOT_WRITE_CHARS } from '../journal/snapshot-files.js';
import type { RecordResult, StatsStore } from '../store/stats-store.js';

/** A store the ingest pipeline can snapshot (the embedded one); a shared store needs none. */
export interface SnapshottableStore extends StatsStore, IdTable {
  /** Counts rows [from, to) of a batch held in columns; dropped positions are positions in `events`. */
  recordColumns(events: EventColumns, receivedAt: number, from?: number, to?: number): RecordResult;
  freeze(): void;
  thaw(): void;
  snapshotLines(): Iterable<string>;
  restoreSnapshot(lines: Iterable<string>): void;
}

export interface EventIngestOptions {
  store: SnapshottableStore;
  journal: EventJournal;
  clock: Clock;
  errorReports: ErrorReportSink;
  /** Which workspaces ingest keys may submit for (default: their own only). */
  owners?: IngestOwners;
  /** Snapshot once the journal since the last one exceeds this (and twice the last snapshot). */
  snapshotMinBytes?: number;
  /** Snapshot at least this often while events arrive. */
  snapshotEveryMs?: number;
  /** The snapshot's copy yields to the event loop after this many milliseconds of work (default 5; 0: after every line). */
  snapshotSliceMs?: number;
  /** Monotonic milliseconds for that slicing (default performance.now; tests pass their own). */
  stopwatch?: () => number;
  onError?: (message: string, error: unknown) => void;
}

/**
 * By default the snapshot's copy of the store yields to the event loop after this long: lines differ
 * widely in cost (an asset with a million session marks is one line), so a fixed count of
 * lines per slice held reads up for 100-225 ms at a time with 1 M marks over 10,000 assets.
 */
const SNAPSHOT_SLICE_MS = 5;
/**
 * Events counted in one go: a 16 MiB batch holds up to about 240,000 events, whose counting
 * would hold the event loop for several hundred milliseconds. Counting a batch slice by slice
 * gives the same state as counting it whole (events apply one by one under one receipt time),
 * so replay, which counts whole batches, still rebuilds exactly the same statistics.
 */
const EVENTS_PER_COUNT_SLICE = 8192;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The embedded ingest pipeline: parse → journal durably (group commit) → count, strictly in
 * journal order, so replaying the journal on start rebuilds exactly the same statistics. A batch
 * is answered only once it is durable and visible.
 */
export class EventIngestService implements EventIngest {
  private readonly store: SnapshottableStore;
  private readonly journal: EventJournal;
  private readonly clock: Clock;
  private readonly intake: BatchIntake;
  private readonly snapshotMinBytes: number;
  private readonly snapshotEveryMs: number;
  private readonly snapshotSliceMs: number;
  private readonly stopwatch: () => number;
  private readonly onError: (message: string, error: unknown) => void;
  private seq = 0;
  private appliedSeq = 0;
  /** Every batch is counted after the one before it: journal order is counting order. */
  private tail: Promise<unknown> = Promise.resolve();
  private snapshotting: Promise<void> | null = null;
  private lastSnapshotAt: number;
  private lastSnapshotBytes = 0;
  private restored = false;

  constructor(options: EventIngestOptions) {
    this.store = options.store;
    this.journal = options.journal;
    this.clock = options.clock;
    this.intake = new BatchIntake(options.clock, options.errorReports, options.owners ?? ownWorkspaceOnly, { ids: options.store });
    this.snapshotMinBytes = options.snapshotMinBytes ?? 512 * 1024 * 1024;
    this.snapshotEveryMs = options.snapshotEveryMs ?? 10 * 60_000;
    this.snapshotSliceMs = options.snapshotSliceMs ?? SNAPSHOT_SLICE_MS;
    this.stopwatch = options.stopwatch ?? (() => performance.now());
    this.onError = options.onError ?? (() => undefined);
    this.lastSnapshotAt = this.clock.now();
  }

  /** Rebuilds the store from the latest snapshot and the journal after it. Call once, before ingest. */
  async restore(): Promise<ReplayResult> {
    const result = await this.journal.replay({
      snapshot: (_seq, lines) => this.store.restoreSnapshot(lines),
      batch: (b) => {
        const { columns } = parseEventColumnsSync(b.body, b.kind, replayContext(b), { ids: this.store });
        this.store.recordColumns(columns, b.receivedAt);
      },
    });
    this.seq = this.appliedSeq = result.lastSeq;
    this.lastSnapshotAt = this.clock.now();
    this.restored = true;
    return result;
  }

  /** Running totals, for metrics. */
  get totals(): Readonly<IngestTotals> {
    return this.intake.totals;
  }

  async ingest(body: Buffer, kind: EventBatchKind, auth: IngestAuth): Promise<IngestResult> {
    if (!this.restored) throw new AppError('service_unavailable', 'Statistics are still being restored; retry shortly');
    const batch = await this.intake.receive(body, kind, auth);
    const { receivedAt, events } = batch;
    if (events.length === 0) return this.intake.nothingAccepted(batch);
    const seq = ++this.seq;
    const durable = this.journal.append({ seq, receivedAt, kind, authOwner: auth.owner, owners: batch.owners, body });
    const counted = this.tail
      .then(() => durable)
      .then(async () => {
        const dropped = await this.countInSlices(events, receivedAt);
        this.appliedSeq = seq;
        return dropped;
      });
    this.tail = counted.catch(() => undefined);
    let dropped: readonly number[];
    try {
      dropped = await counted;
    } catch (error) {
      throw new AppError('service_unavailable', 'The events could not be stored durably; retry the batch', { cause: error });
    }
    // Committed and counted: from here on nothing may fail the request (a retry would count twice).
    const result = this.intake.accept(batch, dropped);
    try {
      this.maybeSnapshot();
    } catch (error) {
      this.onError('vod-stats snapshot could not be scheduled', error);
    }
    return result;
  }

  /** Counts a batch a slice at a time (yielding in between); resolves with the positions the store dropped. */
  private async countInSlices(events: EventColumns, receivedAt: number): Promise<readonly number[]> {
    if (events.length <= EVENTS_PER_COUNT_SLICE) return this.store.recordColumns(events, receivedAt).dropped;
    const dropped: number[] = [];
    for (let from = 0; from < events.length; from += EVENTS_PER_COUNT_SLICE) {
      if (from > 0) await yieldToEventLoop();
      const slice: RecordResult = this.store.recordColumns(events, receivedAt, from, Math.min(events.length, from + EVENTS_PER_COUNT_SLICE));
      dropped.push(...slice.dropped);
    }
    return dropped;
  }

  private maybeSnapshot(): void {
    if (this.snapshotting !== null) return;
    const since = this.journal.usage().bytesSinceSnapshot;
    const due =
      since >= Math.max(this.snapshotMinBytes, 2 * this.lastSnapshotBytes) ||
      (since > 0 && this.clock.now() - this.lastSnapshotAt >= this.snapshotEveryMs);
    if (due) void this.snapshot().catch((error: unknown) => this.onError('vod-stats snapshot failed', error));
  }

  /**
   * Writes a snapshot of everything counted so far and lets the journal drop what it covers.
   * Counting pauses only while the state is copied to the file (in slices, so reads go on
   * meanwhile; the read-back check and the fsync come after). The lines go to the journal a
   * chunk at a time as they are made: a busy store's snapshot (tens of MB of text) is never
   * held in memory whole.
   */
  snapshot(): Promise<void> {
    if (this.snapshotting !== null) return this.snapshotting;
    const run = async () => {
      let copied!: () => void;
      const copyDone = new Promise<void>((resolve) => {
        copied = resolve;
      });
      let frozen = false;
      /** Ends the copy once: the store thaws and counting resumes (idempotent). */
      const endCopy = () => {
        if (frozen) this.store.thaw();
        frozen = false;
        copied();
      };
      let seq = 0;
      const started = this.tail.then(() => {
        seq = this.appliedSeq;
        this.store.freeze();
        frozen = true;
      });
      // Batches arriving meanwhile wait for the copy, not for the read-back check.
      this.tail = started.then(() => copyDone).catch(() => undefined);
      await started;
      try {
        await this.journal.writeSnapshot(seq, this.copyChunks(endCopy));
      } finally {
        // The journal refused before reading (or stopped part-way): the store must not stay frozen.
        endCopy();
      }
      this.lastSnapshotAt = this.clock.now();
      this.lastSnapshotBytes = this.journal.usage().snapshotBytes;
    };
    this.snapshotting = run().finally(() => {
      this.snapshotting = null;
    });
    return this.snapshotting;
  }

  /**
   * The frozen store's lines, the journal's write size at a time (several lines joined by
   * newlines: a full chunk is written as it is, not gathered and joined again), yielding to the event loop every snapshotSliceMs of work; `done` runs when the
   * copy ends, finished or not.
   */
  private async *copyChunks(done: () => void): AsyncGenerator<string> {
    try {
      let chunk: string[] = [];
      let chars = 0;
      let sliceStart = this.stopwatch();
      for (const line of this.store.snapshotLines()) {
        chunk.push(line);
        chars += line.length + 1;
        const sliceOver = this.stopwatch() - sliceStart >= this.snapshotSliceMs;
        if (chars >= SNAPSHOT_WRITE_CHARS || sliceOver) {
          yield chunk.join('\n');
          chunk = [];
          chars = 0;
        }
        if (sliceOver) {
          await yieldToEventLoop();
          sliceStart = this.stopwatch();
        }
      }
      if (chunk.length > 0) yield chunk.join('\n');
    } finally {
      done();
    }
  }

  /**
   * Prunes the store once no snapshot copy holds it (a frozen store prunes nothing, and a copy
   * now lasts as long as its file takes to write): after the batches and copy queued so far.
   */
  prune(): Promise<unknown> {
    return this.tail.then(() => this.store.prune());
  }

  /** Journal bytes a restart would replay on top of the latest snapshot. */
  journalBacklog(): number {
    return this.journal.usage().bytesSinceSnapshot;
  }

  /** Waits for every batch in flight and any snapshot being written. */
  async drain(): Promise<void> {
    await this.tail;
    if (this.snapshotting !== null) await this.snapshotting.catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.drain();
    await this.journal.close();
  }
}
