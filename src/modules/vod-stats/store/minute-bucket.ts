import type { LatencySummary, WindowStats } from './stats-store.js';

/**
 * The counters of one UTC minute, for one asset or (summed) for one workspace. Session
 * counters hold distinct sessions: dedupe happens before an event reaches a bucket.
 * Latencies start at 0 so the fields stay small integers until a real sample arrives.
 */
export class MinuteBucket {
  requests = 0;
  manifest = 0;
  ad = 0;
  starts = 0;
  /** Playback error code -> distinct sessions; null until the first error. */
  errors: Map<number, number> | null = null;
  manifestMin = 0;
  manifestMax = 0;
  manifestSum = 0;
  manifestCount = 0;
  adMin = 0;
  adMax = 0;
  adSum = 0;
  adCount = 0;

  constructor(readonly minute: number) {}

  addError(code: number): void {
    const errors = (this.errors ??= new Map());
    errors.set(code, (errors.get(code) ?? 0) + 1);
  }

  addManifestLatency(ms: number): void {
    if (this.manifestCount === 0 || ms < this.manifestMin) this.manifestMin = ms;
    if (this.manifestCount === 0 || ms > this.manifestMax) this.manifestMax = ms;
    this.manifestSum += ms;
    this.manifestCount++;
  }

  addAdLatency(ms: number): void {
    if (this.adCount === 0 || ms < this.adMin) this.adMin = ms;
    if (this.adCount === 0 || ms > this.adMax) this.adMax = ms;
    this.adSum += ms;
    this.adCount++;
  }

  /** Plain form for snapshots: positional, so a snapshot of 100,000 assets stays small. */
  toJSON(): unknown[] {
    return [
      this.minute,
      this.requests,
      this.manifest,
      this.ad,
      this.starts,
      this.errors === null ? 0 : [...this.errors].flat(),
      this.manifestMin,
      this.manifestMax,
      this.manifestSum,
      this.manifestCount,
      this.adMin,
      this.adMax,
      this.adSum,
      this.adCount,
    ];
  }

  static fromJSON(row: unknown): MinuteBucket {
    if (!Array.isArray(row) || row.length !== 14) throw new Error('snapshot: malformed minute bucket');
    const n = (i: number): number => {
      const value: unknown = row[i];
      if (typeof value !== 'number') throw new Error('snapshot: malformed minute bucket');
      return value;
    };
    const bucket = new MinuteBucket(n(0));
    bucket.requests = n(1);
    bucket.manifest = n(2);
    bucket.ad = n(3);
    bucket.starts = n(4);
    const errors: unknown = row[5];
    if (Array.isArray(errors) && errors.length > 0) {
      bucket.errors = new Map();
      for (let i = 0; i + 1 < errors.length; i += 2) bucket.errors.set(Number(errors[i]), Number(errors[i + 1]));
    }
    bucket.manifestMin = n(6);
    bucket.manifestMax = n(7);
    bucket.manifestSum = n(8);
    bucket.manifestCount = n(9);
    bucket.adMin = n(10);
    bucket.adMax = n(11);
    bucket.adSum = n(12);
    bucket.adCount = n(13);
    return bucket;
  }
}

const emptyLatency = (): LatencySummary => ({ min: 0, max: 0, sum: 0, count: 0 });

const mergeLatency = (into: LatencySummary, min: number, max: number, sum: number, count: number): void => {
  if (count === 0) return;
  if (into.count === 0 || min < into.min) into.min = min;
  if (into.count === 0 || max > into.max) into.max = max;
  into.sum += sum;
  into.count += count;
};

const NO_ERRORS: ReadonlyMap<number, number> = new Map();

/** Sums the buckets whose minute lies in [first, last] into one window. */
export const sumWindow = (buckets: Iterable<MinuteBucket>, first: number, last: number): WindowStats => {
  let errors: Map<number, number> | undefined;
  const stats: WindowStats = {
    requests: 0,
    manifest: 0,
    ad: 0,
    new: 0,
    errors: NO_ERRORS,
    manifestLatency: emptyLatency(),
    adLatency: emptyLatency(),
  };
  for (const b of buckets) {
    if (b.minute < first || b.minute > last) continue;
    stats.requests += b.requests;
    stats.manifest += b.manifest;
    stats.ad += b.ad;
    stats.new += b.starts;
    if (b.errors !== null) {
      errors ??= new Map();
      for (const [code, n] of b.errors) errors.set(code, (errors.get(code) ?? 0) + n);
    }
    mergeLatency(stats.manifestLatency, b.manifestMin, b.manifestMax, b.manifestSum, b.manifestCount);
    mergeLatency(stats.adLatency, b.adMin, b.adMax, b.adSum, b.adCount);
  }
  if (errors !== undefined) stats.errors = errors;
  return stats;
};
