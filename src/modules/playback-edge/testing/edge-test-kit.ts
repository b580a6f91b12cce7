import type { FakeClock } from '../../../platform/clock.js';
import type { PlaybackEvent } from '../../vod-stats/events.schema.js';
import type { AdDecisionServer } from '../ad-decision.js';
import type { PlaybackEdgeOverrides } from '../playback-edge.module.js';
import type { PlaybackEventSink } from '../playback-events.js';
import { playbackSignature } from '../playback-token.js';

/** A stopwatch that moves `stepMs` on every reading, so measured latencies are known in advance. */
export class FakeStopwatch {
  private current = 1000;
  constructor(public stepMs = 0.5) {}
  read = (): number => {
    this.current += this.stepMs;
    return this.current;
  };
}

/** Keeps a copy of every event and passes it on (to the real statistics ingest). */
export class TeeEventSink implements PlaybackEventSink {
  constructor(
    private readonly next: PlaybackEventSink,
    readonly events: PlaybackEvent[] = [],
  ) {}
  emit(events: readonly PlaybackEvent[]): void {
    this.events.push(...events);
    this.next.emit(events);
  }
  flush(): Promise<void> {
    return this.next.flush();
  }
}

export interface TestEdge {
  /** Give these to the runtime: `createTestApp({ overrides: { playbackEdge: kit.overrides } })`. */
  overrides: PlaybackEdgeOverrides;
  /** Every event the edge emitted, in order. */
  events: PlaybackEvent[];
  stopwatch: FakeStopwatch;
}

/**
 * Overrides for a playback edge on fake ports (stopwatch, optionally the ad decision server)
 * whose events are recorded and still go through the real statistics ingest.
 */
export function testEdge(options: { adDecisions?: AdDecisionServer; stepMs?: number } = {}): TestEdge {
  const stopwatch = new FakeStopwatch(options.stepMs);
  const events: PlaybackEvent[] = [];
  const overrides: PlaybackEdgeOverrides = {
    events: (toIngest) => new TeeEventSink(toIngest, events),
    stopwatch: stopwatch.read,
    ...(options.adDecisions ? { adDecisions: options.adDecisions } : {}),
  };
  return { overrides, events, stopwatch };
}

/** A playback URL path with exactly these parameters; `key` null leaves sig out, '' sends it empty. */
export function urlWith(path: string, pairs: ReadonlyArray<readonly [string, string]>, key: string | null): string {
  const query = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  if (key === null) return `${path}?${query}`;
  return `${path}?${query}&sig=${key === '' ? '' : playbackSignature(key, query)}`;
}

/** The usual valid parameters of a playback URL, before extras. */
export const basePairs = (o: { contentId: string; owner: string; expS: number; ct?: string }): Array<[string, string]> => [
  ['tc', '1'],
  ['exp', String(o.expS)],
  ['rn', 'r4nd0m'],
  ['ct', o.ct ?? 'a'],
  ['cid', o.contentId],
  ['oid', o.owner],
];

/** Moves a fake clock forward in steps until `pending` settles (ad decisions wait on the clock). */
export async function driveClock<T>(pending: Promise<T>, clock: FakeClock, stepMs: number): Promise<T> {
  let settled = false;
  const watched = pending.finally(() => {
    settled = true;
  });
  for (let i = 0; i < 1000 && !settled; i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (!settled) clock.advance(stepMs);
  }
  return watched;
}
