import type { LatencySummary, WindowStats } from './stats-store.js';

/**
 * Offsets of a bucket's counters within its stride. Session counters hold distinct sessions
 * (dedupe happens before an event reaches a bucket); latency min/max/sum/count per kind.
 */
export const F = {
  time: 0,
  requests: 1,
  manifest: 2,
  ad: 3,
  starts: 4,
  manifestMin: 5,
  manifestMax: 6,
  manifestSum: 7,
  manifestCount: 8,
  adMin: 9,
  adMax: 10,
  adSum: 11,
  adCount: 12,
} as const;
export const STRIDE = 13;
/**
 * Playback quality per minute (history only, from CMCD): rebuffer reports, and the startup time of
 * started sessions (playback request to first media segment) as sum, count and max.
 */
export const Q = { time: 0, rebuffers: 1, startupSum: 2, startupCount: 3, startupMax: 4 } as const;
export const QOE_STRIDE = 5;
/** Where a latency kind's four counters start. */
export const MANIFEST_LATENCY = F.manifestMin;
export const AD_LATENCY = F.adMin;

const emptyLatency = (): LatencySummary => ({ min: 0, max: 0, sum: 0, count: 0 });

export const emptyWindow = (): WindowStats => ({
  requests: 0,
  manifest: 0,
  ad: 0,
  new: 0,
  errors: new Map(),
  manifestLatency: emptyLatency(),
  adLatency: emptyLatency(),
});

const mergeLatency = (into: LatencySummary, cells: readonly number[], at: number): void => {
  const count = cells[at + 3] as number;
  if (count === 0) return;
  const min = cells[at] as number;
  const max = cells[at + 1] as number;
  if (into.count === 0 || min < into.min) into.min = min;
  if (into.count === 0 || max > into.max) into.max = max;
  into.sum += cells[at + 2] as number;
  into.count += count;
};

/**
 * Counters per unit of time (a second or a minute), for the buckets that hold any, in ascending
 * time order. Packed in one number array (STRIDE numbers a bucket) so an asset's few buckets cost
 * a few dozen bytes each and nothing for the collector to walk; error counts, rare, sit in a
 * second flat array `[time, code, sessions, ...]`, also in ascending time order.
 */
export class BucketSeries {
  cells: number[] = [];
  errors: number[] | null = null;

  /** Numbers per bucket: STRIDE for statistics, QOE_STRIDE for playback quality. */
  constructor(readonly stride: number = STRIDE) {}

  get length(): number {
    return this.cells.length / this.stride;
  }

  /** The time of bucket `i` (0-based). */
  timeAt(i: number): number {
    return this.cells[i * this.stride] as number;
  }

  /** The offset of the bucket for `time`, created empty if missing. Recent times are cheapest. */
  slot(time: number): number {
    const cells = this.cells;
    const stride = this.stride;
    let at = cells.length - stride;
    while (at >= 0 && (cells[at] as number) > time) at -= stride;
    if (at >= 0 && cells[at] === time) return at;
    at += stride;
    // Exact-size arrays (push would reserve room for 17 more numbers): most series hold one or two buckets.
    const fresh = stride === STRIDE ? [time, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : [time, 0, 0, 0, 0];
    if (cells.length === 0) this.cells = fresh;
    else if (at === cells.length) this.cells = cells.concat(fresh);
    else cells.splice(at, 0, ...fresh);
    return at;
  }

  /** Adds one to counter `field` of the bucket for `time`. */
  add(time: number, field: number): void {
    const at = this.slot(time); // before reading this.cells: slot() may replace the array
    this.cells[at + field] = (this.cells[at + field] as number) + 1;
  }

  /** Adds a latency sample of the kind starting at `base` (MANIFEST_LATENCY or AD_LATENCY). */
  addLatency(time: number, base: number, ms: number): void {
    const at = this.slot(time) + base;
    const cells = this.cells; // after slot(), which may replace the array
    const count = cells[at + 3] as number;
    if (count === 0 || ms < (cells[at] as number)) cells[at] = ms;
    if (count === 0 || ms > (cells[at + 1] as number)) cells[at + 1] = ms;
    cells[at + 2] = (cells[at + 2] as number) + ms;
    cells[at + 3] = count + 1;
  }

  /** Counts a session with error `code` (its bucket exists too, like a bucket of any other count). */
  addError(time: number, code: number): void {
    this.slot(time);
    const errors = (this.errors ??= []);
    let i = errors.length - 3;
    while (i >= 0 && (errors[i] as number) > time) i -= 3;
    for (let j = i; j >= 0 && errors[j] === time; j -= 3) {
      if (errors[j + 1] === code) {
        errors[j + 2] = (errors[j + 2] as number) + 1;
        return;
      }
    }
    errors.splice(i + 3, 0, time, code, 1);
  }

  /** Adds a startup time (QOE_STRIDE series). */
  addStartup(time: number, ms: number): void {
    const at = this.slot(time);
    const cells = this.cells; // after slot(), which may replace the array
    cells[at + Q.startupSum] = (cells[at + Q.startupSum] as number) + ms;
    cells[at + Q.startupCount] = (cells[at + Q.startupCount] as number) + 1;
    if (ms > (cells[at + Q.startupMax] as number)) cells[at + Q.startupMax] = ms;
  }

  /** Drops every bucket before `first`; returns how many buckets went. */
  dropBefore(first: number): number {
    const cells = this.cells;
    const stride = this.stride;
    let cut = 0;
    while (cut < cells.length && (cells[cut] as number) < first) cut += stride;
    if (cut > 0) this.cells = cut === cells.length ? [] : cells.slice(cut);
    if (this.errors !== null) {
      let e = 0;
      while (e < this.errors.length && (this.errors[e] as number) < first) e += 3;
      if (e > 0) this.errors = e === this.errors.length ? null : this.errors.slice(e);
    }
    return cut / stride;
  }

  /** The counters of the buckets whose time lies in [first, last], summed in ascending time order. */
  sum(first: number, last: number): WindowStats {
    const stats = emptyWindow();
    const cells = this.cells;
    for (let at = 0; at < cells.length; at += STRIDE) {
      const time = cells[at] as number;
      if (time < first) continue;
      if (time > last) break;
      stats.requests += cells[at + F.requests] as number;
      stats.manifest += cells[at + F.manifest] as number;
      stats.ad += cells[at + F.ad] as number;
      stats.new += cells[at + F.starts] as number;
      mergeLatency(stats.manifestLatency, cells, at + MANIFEST_LATENCY);
      mergeLatency(stats.adLatency, cells, at + AD_LATENCY);
    }
    const errors = this.errors;
    if (errors !== null) {
      const map = stats.errors as Map<number, number>;
      for (let i = 0; i < errors.length; i += 3) {
        const time = errors[i] as number;
        if (time < first) continue;
        if (time > last) break;
        const code = errors[i + 1] as number;
        map.set(code, (map.get(code) ?? 0) + (errors[i + 2] as number));
      }
    }
    return stats;
  }

  /** Sum of counter `field` over the buckets whose time lies in [first, last]. */
  total(first: number, last: number, field: number): number {
    const cells = this.cells;
    let n = 0;
    for (let at = 0; at < cells.length; at += STRIDE) {
      const time = cells[at] as number;
      if (time > last) break;
      if (time >= first) n += cells[at + field] as number;
    }
    return n;
  }

  /** Snapshot form: the two flat arrays. */
  toJSON(): [number[], number[]] {
    return [this.cells, this.errors ?? []];
  }

  /** Reads the snapshot form back; throws on anything malformed (snapshots are checked, never trusted). */
  static fromJSON(value: unknown, stride: number = STRIDE): BucketSeries {
    if (!Array.isArray(value) || value.length !== 2) throw new Error('malformed bucket series');
    const [cells, errors] = value as unknown[];
    const series = new BucketSeries(stride);
    series.cells = finiteList(cells, stride);
    const e = finiteList(errors, 3);
    series.errors = e.length > 0 ? e : null;
    for (let at = stride; at < series.cells.length; at += stride) {
      if ((series.cells[at] as number) <= (series.cells[at - stride] as number)) throw new Error('bucket series out of order');
    }
    return series;
  }
}

/** A list of finite numbers whose length is a multiple of `stride`. */
export const finiteList = (value: unknown, stride: number): number[] => {
  if (!Array.isArray(value) || value.length % stride !== 0) throw new Error('malformed number list');
  for (const v of value) if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error('non-finite number');
  return value as number[];
};
