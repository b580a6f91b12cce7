import { mediaRootOf } from '../../../platform/media/media-root.js';
import type { FakeClock } from '../../../platform/clock.js';
import type { Config } from '../../../platform/config.js';
import type { EdgeEvent } from '../edge-events.js';
import type { AdDecisionServer } from '../ad-decision.js';
import type { PlaybackEdgeOverrides } from '../playback-edge.module.js';
import type { PlaybackEventSink } from '../playback-events.js';
import { playbackSignature } from '../playback-token.js';
import { writeFakeAsset } from './media-fixtures.js';

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
    readonly events: EdgeEvent[] = [],
  ) {}
  emit(events: readonly EdgeEvent[]): void {
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
  events: EdgeEvent[];
  stopwatch: FakeStopwatch;
}

/**
 * Overrides for a playback edge on fake ports (stopwatch, optionally the ad decision server)
 * whose events are recorded and still go through the real statistics ingest.
 */
export function testEdge(options: { adDecisions?: AdDecisionServer; stepMs?: number } = {}): TestEdge {
  const stopwatch = new FakeStopwatch(options.stepMs);
  const events: EdgeEvent[] = [];
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

/** A path (with query) resolved against the URL of the playlist that names it, as a player does. */
export const resolveUri = (base: string, uri: string): string => {
  const url = new URL(uri, new URL(base, 'http://edge.test'));
  return `${url.pathname}${url.search}`;
};

/** The media URIs of a variant playlist (init segments from EXT-X-MAP, media segments), in order, resolved against it. */
export function mediaUris(variantPath: string, text: string): { maps: string[]; segments: string[] } {
  const maps: string[] = [];
  const segments: string[] = [];
  for (const line of text.split('\n')) {
    const map = /^#EXT-X-MAP:URI="([^"]+)"/.exec(line);
    if (map?.[1]) maps.push(resolveUri(variantPath, map[1]));
    else if (line.length > 0 && !line.startsWith('#')) segments.push(resolveUri(variantPath, line));
  }
  return { maps, segments };
}

/** The variant playlist URIs of a multivariant playlist, resolved against it. */
export const variantUris = (multivariantPath: string, text: string): string[] =>
  text.split('\n').filter((l) => l.length > 0 && !l.startsWith('#')).map((l) => resolveUri(multivariantPath, l));

/** Packages placeholder assets (no ffmpeg) into a test app's media root, for the workspace `owner`. */
export async function placeFakeAssets(t: { runtime: { config: Pick<Config, 'dataDir' | 'mediaDir'> } }, owner: string, ids: readonly string[]): Promise<void> {
  for (const id of ids) await writeFakeAsset(mediaRootOf(t.runtime.config), owner, id);
}
