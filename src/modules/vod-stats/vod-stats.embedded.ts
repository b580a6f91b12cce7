import { join } from 'node:path';
import type { BackgroundWork } from '../../platform/background-work.js';
import { EventIngestService } from './ingest/event-ingest.service.js';
import { checkSnapshotFile } from './ingest/snapshot-check.js';
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
  const { config, clock, log } = deps;
  const store = new MemoryStatsStore({ clock, delayMs: config.statsDelayMs, maxAssetsPerWorkspace: config.maxAssetsPerWorkspace });
  const journal = new FileEventJournal({ dir: join(config.dataDir, 'vod-stats'), checkSnapshot: checkSnapshotFile, warn: (message) => log.warn(message) });
  const ingest = new EventIngestService({ store, journal, ...pipelineDeps(deps) });
  registerVodStatsMetrics(deps.metrics.registry, ingest, store);

  let cancelPrune: (() => void) | undefined;
  let running = false;
  const schedulePrune = () => {
    if (!running) return;
    cancelPrune = clock.setTimer(() => {
      schedulePrune();
      void ingest.prune().catch((err: unknown) => log.error({ err }, 'vod-stats prune failed'));
    }, PRUNE_EVERY_MS);
  };

  const work: BackgroundWork = {
    name: 'vod-stats',
    async start() {
      const restored = await ingest.restore();
      const { skippedSnapshots, damaged, lostBatches, ...counts } = restored;
      if (restored.batches > 0 || restored.snapshotSeq > 0) log.info(counts, 'vod-stats restored from snapshot and journal');
      if (restored.truncatedBytes > 0) log.warn(counts, 'vod-stats journal had a torn tail (crash mid-write); cut it off');
      if (skippedSnapshots.length > 0) {
        log.error(
          { skippedSnapshots, restoredFromSeq: restored.snapshotSeq, batchesReplayed: restored.batches, lostBatches },
          `vod-stats skipped ${skippedSnapshots.length} unreadable snapshot(s) (${skippedSnapshots.map((s) => s.file).join(', ')}, renamed quarantine-*) and restored from ${restored.snapshotSeq > 0 ? `the snapshot at seq ${restored.snapshotSeq}` : 'no snapshot'} plus ${restored.batches} journaled batch(es)`,
        );
      }
      if (damaged.length > 0) {
        const bytes = damaged.reduce((n, d) => n + d.bytes, 0);
        log.error({ damaged, lostBatches }, `vod-stats journal: skipped ${damaged.length} damaged range(s), ${bytes} bytes, about ${lostBatches} batch(es) lost; the bytes are in the quarantine-* files, every other record was restored`);
      }
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
