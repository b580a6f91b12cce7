import { BucketSeries, QOE_STRIDE, STRIDE } from './bucket-series.js';
import type { PlaybackEvent } from '../events.schema.js';
import type { AssetStats, WindowStats } from './stats-store.js';
import { RETENTION_MS } from '../stats-window.js';

/** The JavaScript side of the Redis layout described in stats-lua-state.ts. */

export const NONE = -1;

export const assetKey = (prefix: string, kind: 'a' | 's' | 'h' | 'q', owner: string, assetId: string): string =>
  `${prefix}${kind}:${Buffer.byteLength(owner)}:${owner}:${assetId}`;
export const ownerKey = (prefix: string, owner: string): string => `${prefix}o:${owner}`;
export const ownerHistoryKey = (prefix: string, owner: string): string => `${prefix}oh:${owner}`;
export const ownerQoeKey = (prefix: string, owner: string): string => `${prefix}oq:${owner}`;
/** The dedupe marks of the workspace's workspace-only events (stats-state.lua). */
export const ownerMarksKey = (prefix: string, owner: string): string => `${prefix}om:${owner}`;
export const rankKey = (prefix: string, owner: string): string => `${prefix}r:${owner}`;

const TYPE_CODE = { request: 'r', manifest: 'm', ad: 'a', start: 's', error: 'e', rebuffer: 'b' } as const;

/** Strings per event in a script call (the Lua side reads the same number, see stats-lua.ts). */
export const EVENT_ARGS = 9;

/** Appends one event as the EVENT_ARGS strings the Lua side reads. */
export const pushEvent = (args: string[], e: PlaybackEvent): void => {
  args.push(
    TYPE_CODE[e.type],
    e.owner,
    e.asset_id,
    e.session_id,
    String(e.ts),
    e.latency_ms === undefined ? '' : String(e.latency_ms),
    e.type === 'error' ? String(e.error_code ?? 999) : '',
    e.startup_ms === undefined ? '' : String(e.startup_ms),
    e.workspace_only === true ? 'w' : '',
  );
};

/**
 * Packed buckets "requests,manifest,ad,starts,mMin,mMax,mSum,mCount,aMin,aMax,aSum,aCount[,code,n]..."
 * at the given times (ascending) as a BucketSeries, so they are summed exactly as the embedded
 * store sums its own (same order, same float additions).
 */
export const seriesOf = (times: readonly number[], packed: readonly (string | null | undefined)[]): BucketSeries => {
  const series = new BucketSeries();
  times.forEach((time, i) => {
    const value = packed[i];
    if (value === null || value === undefined) return;
    const p = value.split(',').map(Number);
    series.cells.push(time, ...p.slice(0, STRIDE - 1));
    for (let j = STRIDE - 1; j + 1 < p.length; j += 2) (series.errors ??= []).push(time, p[j] as number, p[j + 1] as number);
  });
  return series;
};

/** A history hash and a playback-quality hash (HGETALL flat lists) as the series historyPoints reads. */
export const historySeriesOf = (history: readonly string[], qoe: readonly string[]): { history: BucketSeries; qoe: BucketSeries | null } => {
  const times: number[] = [];
  const packed: string[] = [];
  const order = (flat: readonly string[]) =>
    Array.from({ length: flat.length / 2 }, (_, i) => [Number(flat[2 * i]), flat[2 * i + 1] as string] as const).sort((a, b) => a[0] - b[0]);
  for (const [time, value] of order(history)) {
    times.push(time);
    packed.push(value);
  }
  const series = seriesOf(times, packed);
  if (qoe.length === 0) return { history: series, qoe: null };
  const q = new BucketSeries(QOE_STRIDE);
  for (const [time, value] of order(qoe)) q.cells.push(time, ...value.split(',').map(Number));
  return { history: series, qoe: q };
};

/** A packed window (one bucket's worth of counters, see `w` in stats-lua-state.ts) as WindowStats. */
const windowOf = (packed: string): WindowStats => seriesOf([0], [packed]).sum(0, 0);

/**
 * An asset's `st`, `lt` and `w` fields (HMGET order st, lt, sq, w) as statistics, or undefined
 * when the asset is absent or past retention at `now`.
 */
export const assetStatsOf = (owner: string, assetId: string, fields: readonly unknown[], now: number): AssetStats | undefined => {
  const [st, lt, , w] = fields;
  if (st === null || st === undefined || typeof w !== 'string') return undefined;
  const start = Number(st);
  const anchor = start !== NONE ? start : Number(lt);
  if (anchor === NONE || anchor + RETENTION_MS < now) return undefined;
  return { owner, assetId, ts: anchor, stats: windowOf(w) };
};

/** Fields of an asset hash that are not detail buckets (st, lt, sq, fl, w). */
export const ASSET_META_FIELDS = 5;
