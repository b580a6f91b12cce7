import type { PlaybackEvent, PlaybackEventType } from './events.schema.js';

/** A normalised event for store tests (owner ws1 unless given). */
export const playbackEvent = (
  type: PlaybackEventType,
  asset: string,
  session: string,
  ts: number,
  extra: Partial<PlaybackEvent> = {},
): PlaybackEvent => ({
  type,
  owner: 'ws1',
  asset_id: asset,
  session_id: session,
  ts,
  latency_ms: undefined,
  error_code: type === 'error' ? 999 : undefined,
  http_status: undefined,
  url: undefined,
  ip: undefined,
  ua: undefined,
  msg: undefined,
  ...extra,
});

/** A small deterministic PRNG (mulberry32) so randomised tests repeat exactly. */
export const seededRandom = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};
