import { MinuteBucket, sumWindow } from './minute-bucket.js';
import type { PlaybackEvent } from '../events.schema.js';
import type { AssetStats, WindowStats } from './stats-store.js';
import { RETENTION_MS, WINDOW_MINUTES, minuteOf } from '../stats-window.js';

/** The JavaScript side of the Redis layout described in stats-state.lua. */

/** An absent start or latest time in an asset hash (st, lt). */
export const NONE = -1;

export const assetKey = (prefix: string, kind: 'a' | 's', owner: string, assetId: string): string =>
  `${prefix}${kind}:${Buffer.byteLength(owner)}:${owner}:${assetId}`;
export const ownerKey = (prefix: string, owner: string): string => `${prefix}o:${owner}`;
export const rankKey = (prefix: string, owner: string): string => `${prefix}r:${owner}`;

const TYPE_CODE = { request: 'r', manifest: 'm', ad: 'a', start: 's', error: 'e' } as const;

/** Appends one event as the 7 strings the Lua side reads. */
export const pushEvent = (args: string[], e: PlaybackEvent): void => {
  args.push(
    TYPE_CODE[e.type],
    e.owner,
    e.asset_id,
    e.session_id,
    String(e.ts),
    e.latency_ms === undefined ? '' : String(e.latency_ms),
    e.type === 'error' ? String(e.error_code ?? 999) : '',
  );
};

/** A packed minute bucket (see stats-state.lua) as the embedded store's MinuteBucket. */
export const decodeBucket = (minute: number, packed: string): MinuteBucket => {
  const p = packed.split(',').map(Number);
  const b = new MinuteBucket(minute);
  b.requests = p[0] ?? 0;
  b.manifest = p[1] ?? 0;
  b.ad = p[2] ?? 0;
  b.starts = p[3] ?? 0;
  b.manifestMin = p[4] ?? 0;
  b.manifestMax = p[5] ?? 0;
  b.manifestSum = p[6] ?? 0;
  b.manifestCount = p[7] ?? 0;
  b.adMin = p[8] ?? 0;
  b.adMax = p[9] ?? 0;
  b.adSum = p[10] ?? 0;
  b.adCount = p[11] ?? 0;
  for (let i = 12; i + 1 < p.length; i += 2) (b.errors ??= new Map()).set(p[i] as number, p[i + 1] as number);
  return b;
};

/**
 * An asset hash (HGETALL as a flat [field, value, ...] list) as statistics, or undefined when it
 * is absent or past retention at `now`. Only the window's buckets are decoded, in ascending minute
 * order: the order the embedded store sums them in, so float sums come out identical.
 */
export const assetStatsOf = (owner: string, assetId: string, flat: readonly unknown[], now: number): AssetStats | undefined => {
  let st: number | undefined;
  let lt = NONE;
  for (let i = 0; i + 1 < flat.length; i += 2) {
    if (flat[i] === 'st') st = Number(flat[i + 1]);
    else if (flat[i] === 'lt') lt = Number(flat[i + 1]);
  }
  if (st === undefined) return undefined;
  const anchor = st !== NONE ? st : lt;
  if (anchor === NONE || anchor + RETENTION_MS < now) return undefined;
  const last = minuteOf(anchor);
  const first = last - WINDOW_MINUTES + 1;
  const buckets: MinuteBucket[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const minute = Number(flat[i]);
    if (minute >= first && minute <= last) buckets.push(decodeBucket(minute, String(flat[i + 1])));
  }
  buckets.sort((a, b) => a.minute - b.minute);
  return { owner, assetId, ts: anchor, stats: sumWindow(buckets, first, last) };
};

/** Workspace minute totals (HMGET of the window's minutes) as the summary window. */
export const summaryStatsOf = (minutes: readonly number[], packed: readonly (string | null)[]): WindowStats => {
  const buckets: MinuteBucket[] = [];
  minutes.forEach((minute, i) => {
    const value = packed[i];
    if (value !== null && value !== undefined) buckets.push(decodeBucket(minute, value));
  });
  const first = minutes[0] ?? 0;
  return sumWindow(buckets, first, minutes[minutes.length - 1] ?? first);
};

/** Fields of an asset hash that are not minute buckets (st, lt, sq). */
export const ASSET_META_FIELDS = 3;
