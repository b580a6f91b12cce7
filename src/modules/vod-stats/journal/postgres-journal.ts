import { randomBytes } from 'node:crypto';
import type { Clock } from '../../../platform/clock.js';
import type { Db } from '../../../platform/db/database.js';
import type { ClusterJournal, JournalBinding, NewBatch, StoredBatch } from './cluster-journal.js';
import type { NewJournalRow } from './journal.repository.js';
import { advanceEpoch, batchesAfter, batchesOfInstance, createBinding, deleteBatchesBefore, insertBatches, readBinding } from './journal.repository.js';

export interface PostgresEventJournalOptions {
  db: Db;
  /** Names this process in the rows it writes, so a sweep finds the batches of a dead instance. */
  instanceId: string;
  /** Appends waiting while others are written go out together, up to this many rows (default 256)... */
  maxGroupRows?: number;
  /** ...and this many body bytes (default 8 MiB; a larger single batch goes alone). */
  maxGroupBytes?: number;
  /** INSERT statements in flight at once (default 4). */
  maxInFlight?: number;
  /** Epochs are times (ms), so one never repeats after the database is restored to an earlier point. */
  clock?: Clock;
}

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
 */
export class PostgresEventJournal implements ClusterJournal {
  private readonly db: Db;
  private readonly instanceId: string;
  private readonly maxGroupRows: number;
  private readonly maxGroupBytes: number;
  private readonly maxInFlight: number;
  private readonly now: () => number;
  private queue: PendingAppend[] = [];
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private closed = false;
  /** Batches appended and INSERT statements run, for tests and metrics. */
  readonly counters = { appends: 0, inserts: 0 };

  constructor(options: PostgresEventJournalOptions) {
    this.db = options.db;
    this.instanceId = options.instanceId;
    this.maxGroupRows = options.maxGroupRows ?? 256;
    this.maxGroupBytes = options.maxGroupBytes ?? 8 * 1024 * 1024;
    this.maxInFlight = options.maxInFlight ?? 4;
    this.now = () => options.clock?.now() ?? Date.now();
  }

  async binding(): Promise<JournalBinding> {
    let row = await readBinding(this.db);
    if (row === undefined) {
      await createBinding(this.db, randomBytes(16).toString('hex'), this.now(), this.now());
      row = await readBinding(this.db);
    }
    if (row === undefined) throw new Error('vod-stats binding row could not be created');
    return { deploymentId: row.deployment_id, epoch: Number(row.epoch) };
  }

  async nextEpoch(): Promise<JournalBinding> {
    await this.binding();
    const row = await advanceEpoch(this.db, this.now());
    return { deploymentId: row.deployment_id, epoch: row.epoch };
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

  /** Journals a batch under a database-assigned seq; resolves with it and its counting key once committed. */
  appendNew(batch: NewBatch): Promise<{ seq: number; batchKey: string }> {
    if (this.closed) return Promise.reject(new Error('vod-stats journal is closed'));
    const row: NewJournalRow = {
      received_at: batch.receivedAt,
      kind: batch.kind,
      auth_owner: batch.authOwner,
      any_owner: batch.owners === null ? 1 : 0,
      owners: batch.owners === null || (batch.owners.length === 1 && batch.owners[0] === batch.authOwner) ? null : JSON.stringify(batch.owners),
      events: batch.events,
      instance_id: this.instanceId,
      body: batch.body,
      // 48 random bits: a seq handed out again after a restore gets another key.
      batch_key: randomBytes(6).toString('hex'),
    };
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ row, bytes: batch.body.length, resolve, reject });
      this.pump();
    }).then((seq) => ({ seq, batchKey: `${seq}:${row.batch_key}` }));
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
      void this.write(group).finally(() => {
        this.inFlight--;
        this.pump();
        if (this.inFlight === 0 && this.queue.length === 0) for (const done of this.idle.splice(0)) done();
      });
    }
  }

  private async write(group: PendingAppend[]): Promise<void> {
    try {
      const seqs = await insertBatches(this.db, group.map((p) => p.row));
      this.counters.inserts++;
      this.counters.appends += group.length;
      group.forEach((p, i) => p.resolve(seqs[i] as number));
    } catch (error) {
      for (const p of group) p.reject(error);
    }
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

  /** Waits for the appends in flight, then refuses new ones. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.inFlight === 0 && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }
}
