import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../../platform/clock.js';
import { assetStates } from './assets.schema.js';
import type { AssetCounts } from './asset-store.js';

export interface AssetMetricSources {
  /** Counts over the whole database (every instance), read when scraped. */
  counts(now: number): Promise<AssetCounts>;
  /** Jobs this instance packages right now. */
  runningHere(): number;
}

/** Asset library metrics; returns the hook that counts a failed packaging. */
export function registerAssetMetrics(registry: Registry, sources: AssetMetricSources, clock: Clock): { failed(): void } {
  // One read of the counts serves every gauge of a scrape.
  let pending: Promise<AssetCounts> | undefined;
  const counts = () => {
    pending ??= sources.counts(clock.now()).finally(() => setImmediate(() => (pending = undefined)));
    return pending;
  };

  new Gauge({
    name: 'playline_assets',
    help: 'Assets of the library, by state (all instances)',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const { byState } = await counts();
      for (const state of assetStates) this.set({ state }, byState[state]);
    },
  });
  new Gauge({
    name: 'playline_assets_packaging_jobs',
    help: 'Packaging jobs: running (held by an instance) and queued (all instances)',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const c = await counts();
      this.set({ state: 'running' }, c.jobsRunning);
      this.set({ state: 'queued' }, c.jobsQueued);
    },
  });
  new Gauge({
    name: 'playline_assets_packaging_running_here',
    help: 'Packaging jobs (ffmpeg runs) this instance is running',
    registers: [registry],
    collect() {
      this.set(sources.runningHere());
    },
  });
  const failures = new Counter({ name: 'playline_assets_packaging_failures_total', help: 'Assets whose probing or packaging failed (this instance)', registers: [registry] });
  return { failed: () => failures.inc() };
}
