import type { JournalBatch } from './journal.js';

/** A batch to journal; the database assigns its seq. */
export type NewBatch = Omit<JournalBatch, 'seq'> & { events: number };

/** A journaled batch with what the cluster needs beyond the batch record. */
export interface StoredBatch extends JournalBatch {
  events: number;
  instanceId: string;
  /** The key Redis marks the batch counted under: unique to this row, even where a seq is handed out again. */
  batchKey: string;
}

/** Where the Redis statistics must come from: this journal's deployment, as of its epoch. */
export interface JournalBinding {
  deploymentId: string;
  /** Moves on at every rebuild of the Redis statistics from this journal. */
  epoch: number;
}

/** The binding as Redis keeps it. */
export const bindingToken = (b: JournalBinding): string => `${b.deploymentId}:${b.epoch}`;

/**
 * The ingest journal the instances of a cluster share (PostgresEventJournal): the source of
 * truth the Redis statistics are counted from and rebuilt from. Unlike the embedded
 * EventJournal it assigns the seqs and needs no snapshots (Redis holds the state).
 */
export interface ClusterJournal {
  /** Journals a batch under a new seq; resolves with it and its counting key once committed. */
  appendNew(batch: NewBatch): Promise<{ seq: number; batchKey: string }>;
  /** Hands over every batch after `afterSeq` received at or after `since`, in journal order. */
  replayFrom(afterSeq: number, since: number, onBatch: (batch: StoredBatch) => void | Promise<void>): Promise<{ batches: number; lastSeq: number }>;
  /** Batches `instanceId` journaled at or after `since` (its clock), after `afterSeq`, in journal order. */
  batchesOf(instanceId: string, since: number, afterSeq: number, limit?: number): Promise<StoredBatch[]>;
  /** Deletes the batches received before `cutoff` (retention); returns how many. */
  deleteBefore(cutoff: number): Promise<number>;
  /** This journal's deployment and epoch (the deployment is named on first use). */
  binding(): Promise<JournalBinding>;
  /** Moves the epoch on (before a rebuild) and returns the new binding. */
  nextEpoch(): Promise<JournalBinding>;
  /** Waits for the appends in flight, then refuses new ones. */
  close(): Promise<void>;
}
