import { join } from 'node:path';
import { moduleLogger } from '../../platform/logger.js';
import type { BackgroundWork } from '../../platform/background-work.js';
import { EventIngestService } from './ingest/event-ingest.service.js';
import { FileEventJournal } from './journal/file-journal.js';
import { MemoryStatsStore } from './store/memory-stats-store.js';
import { pipelineDeps, type VodStatsDeps } from './vod-stats.deps.js';
import { registerVodStatsMetrics } from './vod-stats.metrics.js';

export interface EmbeddedStats {
  ingest: EventIngestService;
  store: MemoryStatsStore;
  /** Nothing to rebuild: the store restores itself from its own journal on start. */
  rebuild: undefined;
  work: BackgroundWork;
}

const PRUNE_EVERY_MS = 60_000;

/** Statistics in the embedded mode: the memory store and the file journal under `<data dir>/vod-stats`. */
export function createEmbeddedStats(deps: VodStatsDeps): EmbeddedStats {
  const { config, clock } = deps;
  const log = moduleLogger('vod-stats', config.logLevel);
  const store = new MemoryStatsStore({ clock, delayMs: config.statsDelayMs });
  const journal = new FileEventJournal({ dir: join(config.dataDir, 'vod-stats'), warn: (message) => log.warn(message) });
  const ingest = new EventIngestService({ store, journal, ...pipelineDeps(deps, log) });
  registerVodStatsMetrics(deps.metrics.registry, ingest, store);

  let cancelPrune: (() => void) | undefined;
  let running = false;
  const schedulePrune = () => {
    if (!running) return;
    cancelPrune = clock.setTimer(() => {
      schedulePrune();
      void store.prune().catch((err: unknown) => log.error({ err }, 'vod-stats prune failed'));
    }, PRUNE_EVERY_MS);
  };

  const work: BackgroundWork = {
    name: 'vod-stats',
    async start() {
      const restored = await ingest.restore();
      if (restored.batches > 0 || restored.snapshotSeq > 0) log.info(restored, 'vod-stats restored from snapshot and journal');
      if (restored.truncatedBytes > 0) log.warn(restored, 'vod-stats journal had a torn tail (crash mid-write); cut it off');
      running = true;
      schedulePrune();
    },
    async stop() {
      running = false;
      cancelPrune?.();
      cancelPrune = undefined;
      // A snapshot on the way down makes the next start quick.
      if (ingest.journalBacklog() > 0) await ingest.snapshot().catch((err: unknown) => log.error({ err }, 'vod-stats snapshot on stop failed'));
      await ingest.close();
    },
  };
  return { ingest, store, rebuild: undefined, work };
}
