import type { EventBatchKind } from '../ingest/event-batch.js';

/**
 * One accepted ingest batch as journaled: the request body exactly as received plus what its
 * parse depended on, so replay re-derives exactly the events that were accepted (and nothing
 * is re-encoded on the hot path).
 */
export interface JournalBatch {
  /** Position in the journal, assigned by the ingest pipeline; strictly increasing. */
  seq: number;
  /** Receipt time (Unix ms): the parse's `now` and the store's receipt time. */
  receivedAt: number;
  kind: EventBatchKind;
  authOwner: string;
  /**
   * The workspaces the batch's events could name when it was accepted (null: any, the playback
   * edge). Replay checks owners against this, so it re-derives exactly the events accepted then.
   */
  owners: readonly string[] | null;
  body: Buffer;
}

/** What replay hands over, in order: at most one snapshot, then every later batch. */
export interface ReplaySink {
  /** The state covering every batch with seq <= `seq`, as written by `writeSnapshot`. */
  snapshot(seq: number, lines: Iterable<string>): void | Promise<void>;
  batch(batch: JournalBatch): void | Promise<void>;
}

export interface ReplayResult {
  /** Seq covered by the snapshot replayed (0 if none). */
  snapshotSeq: number;
  /** Highest seq seen (snapshot or batch); the next batch must use a higher one. */
  lastSeq: number;
  batches: number;
  /** Bytes of a torn record cut from the end of the last journal file (a crash mid-write). */
  truncatedBytes: number;
  /** Damaged bytes skipped elsewhere (each range copied to a quarantine file first). */
  damaged: { file: string; offset: number; bytes: number; quarantine: string }[];
  /** Batches known lost to that damage (the seqs missing around each damaged range). */
  lostBatches: number;
  /** Snapshots that could not be read back and were set aside (renamed quarantine-*), newest first. */
  skippedSnapshots: { file: string; reason: string }[];
}

export interface JournalUsage {
  segments: number;
  journalBytes: number;
  snapshotBytes: number;
  /** Journal bytes appended since the latest snapshot. */
  bytesSinceSnapshot: number;
}

/**
 * The durable log of accepted ingest batches of the embedded mode, with snapshots so it never
 * has to hold more than the serving window: files in the data directory (FileEventJournal).
 * Cluster mode's journal is another contract (ClusterJournal, cluster-journal.ts).
 */
export interface EventJournal {
  /** Opens the journal and replays the latest snapshot and every batch after it, in order. Call once, first. */
  replay(sink: ReplaySink): Promise<ReplayResult>;
  /**
   * Appends a batch; resolves only once it is durable (written and fsynced). Concurrent appends
   * share one write and one fsync (group commit) and become durable in call order.
   */
  append(batch: JournalBatch): Promise<void>;
  /**
   * Durably stores a snapshot covering every batch with seq <= `seq` and reads it back; only
   * then does it count, and the journal files and snapshots it makes redundant are deleted (the
   * previous snapshot and the journal since it are always kept, for a start that finds the
   * newest unreadable). `lines` is consumed while this runs, before the read-back (an
   * asynchronous source is written as it comes; an item may hold several lines joined by
   * newlines). Rejects (keeping everything) when the snapshot does not read back.
   */
  writeSnapshot(seq: number, lines: Iterable<string> | AsyncIterable<string>): Promise<void>;
  usage(): JournalUsage;
  /** Waits for pending appends, then closes; later appends reject. */
  close(): Promise<void>;
}
