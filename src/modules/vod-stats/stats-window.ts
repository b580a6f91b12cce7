/** Time rules of VOD statistics, shared by the parser, the stores and the view. */

export const MINUTE_MS = 60_000;
/** A window is this many minute buckets, ending with its anchor minute. */
export const WINDOW_MINUTES = 3;
/** Statistics are served for this long after an asset's anchor (its most recent start). */
export const RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * How late (minutes after it happened, by receipt time) an event may arrive and still anchor a
 * window or open a bucket, unless a store is given another value. Later events count only inside
 * their asset's current window.
 */
export const LATE_MINUTES = 5;

/** The UTC minute (minutes since the epoch) holding `ms`. */
export const minuteOf = (ms: number): number => Math.floor(ms / MINUTE_MS);

let lastMs = NaN;
let lastIso = '';

/** `2026-11-21T10:04:05.123000Z`: UTC with microseconds, as the API writes every `ts_iso`. */
export const isoMicros = (ms: number): string => {
  // An asset's ts changes only with a new start, and reads of one asset repeat it: remember the last.
  if (ms === lastMs) return lastIso;
  const iso = new Date(ms).toISOString();
  lastMs = ms;
  lastIso = `${iso.slice(0, -1)}000Z`;
  return lastIso;
};
