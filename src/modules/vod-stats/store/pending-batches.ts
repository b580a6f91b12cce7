import type { EventColumns } from '../event-columns.js';

/** Rows [from, to) of `events`, received at `receivedAt`, not visible yet (stats_delay_ms). */
export interface PendingBatch {
  receivedAt: number;
  events: EventColumns;
  from: number;
  to: number;
}

/**
 * The batches the embedded store has received but does not show yet: with stats_delay_ms, an
 * accepted batch becomes visible `delayMs` after its receipt. They wait here in receipt order
 * (receipt times only move forward), so the due ones are always at the front.
 */
export class PendingBatches {
  private batches: PendingBatch[] = [];
  private events = 0;

  constructor(readonly delayMs: number) {}

  /** Events waiting (store size). */
  get eventCount(): number {
    return this.events;
  }

  /** The waiting batches, oldest first (snapshots write them out). */
  list(): readonly PendingBatch[] {
    return this.batches;
  }

  /** Queues rows [from, to) of a batch received at `receivedAt` (after every batch queued before it). */
  add(receivedAt: number, events: EventColumns, from = 0, to = events.length): void {
    this.batches.push({ receivedAt, events, from, to });
    this.events += to - from;
  }

  /** Takes the batches visible at `now` off the queue, oldest first, handing each to `count`. */
  releaseDue(now: number, count: (batch: PendingBatch) => void): void {
    while (this.batches.length > 0 && (this.batches[0] as PendingBatch).receivedAt + this.delayMs <= now) {
      const batch = this.batches.shift() as PendingBatch;
      this.events -= batch.to - batch.from;
      count(batch);
    }
  }

  /** Drops a deleted workspace's rows from every waiting batch. */
  eraseOwner(owner: string): void {
    if (!this.batches.some((b) => b.events.owners.includes(owner))) return;
    this.batches = this.batches.map((b) => {
      const events = b.events.without(owner, b.from, b.to);
      return { receivedAt: b.receivedAt, events, from: 0, to: events.length };
    });
    this.events = this.batches.reduce((n, b) => n + b.to - b.from, 0);
  }
}
