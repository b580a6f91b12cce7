import type { Clock } from '../../../platform/clock.js';
import type { Db } from '../../../platform/db/database.js';
import type { EventJournal, JournalBatch, JournalUsage, ReplayResult, ReplaySink } from './journal.js';
import type { NewJournalRow, StoredBatch } from './journal.repository.js';
import { batchesAfter, batchesOfInstance, deleteBatchesBefore, insertBatches, latestSnapshot, replaceSnapshot } from './journal.repository.js';

export interface PostgresEventJournalOptions {
  db: Db;
  clock: Clock;
  /** Names this process in the rows it writes, so a sweep finds the batches of a dead instance. */
  instanceId: string;
  /** Appends waiting while others are written go out together, up to this many rows (default 256)... */
  maxGroupRows?: number;
  /** ...and this many body bytes (default 8 MiB; a larger single batch goes alone). */
  maxGroupBytes?: number;
  /** INSERT statements in flight at once (default 4). */
  maxInFlight?: number;
}

/** A batch to journal; the database assigns its seq. */
export type NewBatch = Omit<JournalBatch, 'seq'> & { events: number };

interface PendingAppend {
  row: NewJournalRow;
  bytes: number;
  resolve: (seq: number) => void;
  reject: (error: unknown) => void;
}

const PAGE = 500;

/**
 * The ingest journal in PostgreSQL (cluster mode): an append resolves once its batch is
 * committed, so the 202 means durable on the database every instance shares. Appends that
 * arrive while earlier ones are being written share one multi-row INSERT (group commit).
 * Implements the embedded EventJournal contract too (pipeline-assigned seqs, snapshots), but a
 * database is used in one way only: either `append` (one pipeline) or `appendNew` (a cluster).
 */
export class PostgresEventJournal implements EventJournal {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly instanceId: string;
  private readonly maxGroupRows: number;
  private readonly maxGroupBytes: number;
  private readonly maxInFlight: number;
  private queue: PendingAppend[] = [];
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private closed = false;
  private bytesSinceSnapshot = 0;
  private snapshotBytes = 0;
  /** Batches appended and INSERT statements run, for tests and metrics. */
  readonly counters = { appends: 0, inserts: 0 };

  constructor(options: PostgresEventJournalOptions) {
    this.db = options.db;
    this.clock = options.clock;
    this.instanceId = options.instanceId;
    this.maxGroupRows = options.maxGroupRows ?? 256;
    this.maxGroupBytes = options.maxGroupBytes ?? 8 * 1024 * 1024;
    this.maxInFlight = options.maxInFlight ?? 4;
  }

  async replay(sink: ReplaySink): Promise<ReplayResult> {
    const result: ReplayResult = { snapshotSeq: 0, lastSeq: 0, batches: 0, truncatedBytes: 0 };
    const snapshot = await latestSnapshot(this.db);
    if (snapshot !== undefined) {
      result.snapshotSeq = result.lastSeq = snapshot.seq;
      this.snapshotBytes = Buffer.byteLength(snapshot.lines);
      await sink.snapshot(snapshot.seq, snapshot.lines.split('\n'));
    }
    const replayed = await this.replayFrom(result.snapshotSeq, 0, (batch) => sink.batch(batch));
    result.batches = replayed.batches;
    result.lastSeq = Math.max(result.lastSeq, replayed.lastSeq);
    return result;
  }

  /** Hands over every batch after `afterSeq` received at or after `since`, in journal order. */
  async replayFrom(afterSeq: number, since: number, onBatch: (batch: StoredBatch) => void | Promise<void>): Promise<{ batches: number; lastSeq: number }> {
    let last = afterSeq;
    let batches = 0;
    for (;;) {
      const page = await batchesAfter(this.db, last, PAGE, since);
      for (const batch of page) {
        await onBatch(batch);
        last = batch.seq;
        batches++;
      }
      if (page.length < PAGE) return { batches, lastSeq: last };
    }
  }

  /** Batches `instanceId` journaled at or after `since` (its clock), after `afterSeq`, in journal order. */
  batchesOf(instanceId: string, since: number, afterSeq: number, limit = PAGE): Promise<StoredBatch[]> {
    return batchesOfInstance(this.db, instanceId, since, afterSeq, limit);
  }

  append(batch: JournalBatch): Promise<void> {
    return this.enqueue(batch, batch.seq, 0).then(() => undefined);
  }

  /** Journals a batch under a database-assigned seq; resolves with it once committed. */
  appendNew(batch: NewBatch): Promise<number> {
    return this.enqueue(batch, undefined, batch.events);
  }

  private enqueue(batch: Omit<JournalBatch, 'seq'>, seq: number | undefined, events: number): Promise<number> {
    if (this.closed) return Promise.reject(new Error('vod-stats journal is closed'));
    const row: NewJournalRow = {
      ...(seq === undefined ? {} : { seq }),
      received_at: batch.receivedAt,
      kind: batch.kind,
      auth_owner: batch.authOwner,
      any_owner: batch.anyOwner ? 1 : 0,
      events,
      instance_id: this.instanceId,
      body: batch.body,
    };
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ row, bytes: batch.body.length, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      let bytes = 0;
      let take = 0;
      while (take < this.queue.length && take < this.maxGroupRows) {
        const next = (this.queue[take] as PendingAppend).bytes;
        if (take > 0 && bytes + next > this.maxGroupBytes) break;
        bytes += next;
        take++;
      }
      const group = this.queue.splice(0, take);
      this.inFlight++;
      void this.write(group, bytes).finally(() => {
        this.inFlight--;
        this.pump();
        if (this.inFlight === 0 && this.queue.length === 0) for (const done of this.idle.splice(0)) done();
      });
    }
  }

  private async write(group: PendingAppend[], bytes: number): Promise<void> {
    try {
      const seqs = await insertBatches(this.db, group.map((p) => p.row));
      this.counters.inserts++;
      this.counters.appends += group.length;
      this.bytesSinceSnapshot += bytes;
      group.forEach((p, i) => p.resolve(p.row.seq ?? (seqs[i] as number)));
    } catch (error) {
      for (const p of group) p.reject(error);
    }
  }

  async writeSnapshot(seq: number, lines: Iterable<string>): Promise<void> {
    const text = [...lines].join('\n');
    await replaceSnapshot(this.db, seq, text, this.clock.now());
    this.snapshotBytes = Buffer.byteLength(text);
    this.bytesSinceSnapshot = 0;
  }

  /** Deletes the batches received before `cutoff` (retention), a slice at a time; returns how many. */
  async deleteBefore(cutoff: number, slice = 5000): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await deleteBatchesBefore(this.db, cutoff, slice);
      total += deleted;
      if (deleted < slice) return total;
    }
  }

  usage(): JournalUsage {
    return { segments: 0, journalBytes: this.bytesSinceSnapshot, snapshotBytes: this.snapshotBytes, bytesSinceSnapshot: this.bytesSinceSnapshot };
  }

  /** Waits for the appends in flight, then refuses new ones. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.inFlight === 0 && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }
}
