import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../../../platform/clock.js';
import { fileLines } from '../journal/snapshot-files.js';
import { MemoryStatsStore } from '../store/memory-stats-store.js';
import type { SnapshotCheckAnswer } from './snapshot-check.js';

/**
 * The snapshot check thread (snapshot-check.ts): reads one file line by line through the store's
 * own restore code into a scratch store that keeps no asset, and says how it went. A check holds
 * a line at a time: not the file, nor a second copy of the server's statistics (which made the
 * server's memory jump by hundreds of megabytes at each snapshot of a busy store).
 */
const { path } = workerData as { path: string };
let answer: SnapshotCheckAnswer;
try {
  answer = { ok: true, assets: new MemoryStatsStore({ clock: systemClock }).checkSnapshot(fileLines(path)) };
} catch (error) {
  answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
}
parentPort?.postMessage(answer);
