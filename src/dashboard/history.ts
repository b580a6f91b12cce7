import type { VodStats } from './api/types.js';

/** One observation of an asset's 3-minute window, taken by the page while it is open. */
export interface Sample {
  /** Unix seconds of the observation (uPlot's x axis). */
  t: number;
  requests: number;
  started: number;
  manifestMs: number | null;
  adMs: number | null;
}

const MAX_SAMPLES = 900;
const MAX_ASSETS = 500;

/** Per-asset time series built from every poll, bounded in samples and assets. */
export class AssetHistory {
  private readonly series = new Map<string, Sample[]>();

  record(items: readonly VodStats[], atMs: number): void {
    const t = Math.floor(atMs / 1000);
    for (const item of items) {
      let samples = this.series.get(item.id);
      if (!samples) {
        if (this.series.size >= MAX_ASSETS) this.evictStalest();
        samples = [];
        this.series.set(item.id, samples);
      }
      const { sessions, latency } = item.stats;
      const sample: Sample = {
        t,
        requests: sessions.requests,
        started: sessions.new,
        manifestMs: sessions.manifest === 0 ? null : latency.manifest.mean_ms,
        adMs: latency.ad ? latency.ad.mean_ms : null,
      };
      // Two polls within one second (the asset view and the overview) make one sample.
      if (samples.at(-1)?.t === t) samples[samples.length - 1] = sample;
      else samples.push(sample);
      if (samples.length > MAX_SAMPLES) samples.splice(0, samples.length - MAX_SAMPLES);
    }
  }

  of(assetId: string): readonly Sample[] {
    return this.series.get(assetId) ?? [];
  }

  private evictStalest(): void {
    let stalest: string | undefined;
    let oldest = Infinity;
    for (const [id, samples] of this.series) {
      const last = samples.at(-1)?.t ?? 0;
      if (last < oldest) {
        oldest = last;
        stalest = id;
      }
    }
    if (stalest !== undefined) this.series.delete(stalest);
  }
}
