/** Time rules of VOD statistics, shared by the parser, the stores (memory and Redis) and the view. */

export const SECOND_MS = 1000;
export const MINUTE_MS = 60_000;
/**
 * A window is this many seconds, ending with (and including) its last second: an asset's window
 * ends at the second of its most recent start, the owner summary's at the second of the query.
 */
export const WINDOW_S = 180;
/** Statistics are served for this long after an asset's anchor (its most recent start). */
export const RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * Before its first start an asset is anchored by its latest event, and a start that arrives
 * later may move the anchor back. Per-second detail of such an asset is kept this much longer
 * than its window, so a first start reported up to 5 minutes after later events of the same
 * asset still gets an exact window.
 */
export const FIRST_START_GRACE_S = 300;
/** Distinct assets a workspace may hold in its statistics; events for more are dropped (and counted). */
export const DEFAULT_MAX_ASSETS_PER_WORKSPACE = 100_000;

/** The UTC second (seconds since the epoch) holding `ms`. */
export const secondOf = (ms: number): number => Math.floor(ms / SECOND_MS);
/** The UTC minute (minutes since the epoch) holding `ms`. */
export const minuteOf = (ms: number): number => Math.floor(ms / MINUTE_MS);

/**
 * Where an owner summary asked at `now` ends (its `ts`; the window is the WINDOW_S seconds ending
 * with this second). With stats_delay_ms a batch becomes retrievable `delayMs` after its receipt,
 * so what is retrievable at `now` is what was received by `now - delayMs`: a summary ending at
 * `now` would only hold sessions younger than WINDOW_S - delay (none at all with a 180 s delay),
 * while the asset views show them. Ending `delayMs` ago, it holds the last three minutes of
 * sessions that have become retrievable, each for the same 180 s as without a delay.
 */
export const summaryEnd = (now: number, delayMs: number): number => now - delayMs;

/** The first second of the window that ends with second `last`. */
export const windowStart = (last: number): number => last - WINDOW_S + 1;

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
