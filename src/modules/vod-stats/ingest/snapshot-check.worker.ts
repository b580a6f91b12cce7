import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../../../platform/clock.js';
import { MemoryStatsStore } from '../store/memory-stats-store.js';
import type { SnapshotCheckAnswer } from './snapshot-check.js';

/** The snapshot check thread (snapshot-check.ts): restores one file into a scratch store and says how it went. */
const { path } = workerData as { path: string };
let answer: SnapshotCheckAnswer;
try {
  const store = new MemoryStatsStore({ clock: systemClock });
  store.restoreSnapshot((await readFile(path, 'utf8')).split('\n'));
  answer = { ok: true, assets: (await store.size()).assets };
} catch (error) {
  answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
}
parentPort?.postMessage(answer);
