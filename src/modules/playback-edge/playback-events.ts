import type { EventIngest } from '../vod-stats/ingest/event-ingest.js';
import type { EdgeEvent } from './edge-events.js';

/**
 * Where the edge's playback events go: the statistics pipeline (journaled and counted, and
 * accepted `error` events become Error Reports there). `emit` never waits and never throws.
 */
export interface PlaybackEventSink {
  emit(events: readonly EdgeEvent[]): void;
  /** Resolves once every event emitted so far has been handed over and answered. */
  flush(): Promise<void>;
}

export interface IngestEventSinkOptions {
  /** The statistics ingest (the same one `POST /monitoring/events` uses). */
  ingest: EventIngest;
  /** Events per batch at most. Default 2000. */
  maxBatch?: number;
  /** Events waiting at most; more are dropped and counted (ingest is down or far behind). Default 200,000. */
  maxPending?: number;
  onError?: (message: string, error: unknown) => void;
}

/** Who the journal records as the submitter of the edge's batches. */
export const EDGE_SUBMITTER = 'playback-edge';

/**
 * Batches events emitted in one turn of the event loop into one NDJSON ingest call, so a busy
 * edge pays one journal append for many playbacks, without holding events back for a timer.
 */
export class IngestEventSink implements PlaybackEventSink {
  private pending: string[] = [];
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly maxBatch: number;
  private readonly maxPending: number;
  private readonly onError: (message: string, error: unknown) => void;
  /** Events dropped because too many were waiting, and events the ingest refused. */
  readonly counters = { sent: 0, dropped: 0, rejected: 0, failed: 0 };

  constructor(private readonly options: IngestEventSinkOptions) {
    this.maxBatch = options.maxBatch ?? 2000;
    this.maxPending = options.maxPending ?? 200_000;
    this.onError = options.onError ?? (() => undefined);
  }

  emit(events: readonly EdgeEvent[]): void {
    for (const event of events) {
      if (this.pending.length >= this.maxPending) {
        this.counters.dropped += 1;
        continue;
      }
      this.pending.push(JSON.stringify(event));
      if (this.pending.length >= this.maxBatch) this.send();
    }
    if (!this.scheduled && this.pending.length > 0) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.send();
      });
    }
  }

  async flush(): Promise<void> {
    this.send();
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private send(): void {
    while (this.pending.length > 0) {
      const lines = this.pending.splice(0, this.maxBatch);
      const call = this.options.ingest
        .ingest(Buffer.from(`${lines.join('\n')}\n`, 'utf8'), 'ndjson', { owner: EDGE_SUBMITTER, kind: 'internal' })
        .then(
          (result) => {
            this.counters.sent += result.accepted;
            this.counters.rejected += result.rejected_count;
            if (result.rejected.length > 0) this.onError('playback events refused by ingest', result.rejected.slice(0, 3));
          },
          (error: unknown) => {
            this.counters.failed += lines.length;
            this.onError('playback events could not be ingested', error);
          },
        )
        .finally(() => this.inFlight.delete(call));
      this.inFlight.add(call);
    }
  }
}

/** Keeps events in memory (tests, and the edge before statistics are wired). */
export class MemoryEventSink implements PlaybackEventSink {
  readonly events: EdgeEvent[] = [];

  emit(events: readonly EdgeEvent[]): void {
    this.events.push(...events);
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }
}
