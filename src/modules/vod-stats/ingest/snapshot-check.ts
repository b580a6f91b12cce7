import { startWorker } from '../../../platform/worker-thread.js';

/** What the check thread answers. */
export type SnapshotCheckAnswer = { ok: true; assets: number } | { ok: false; error: string };

/**
 * Reads a snapshot file back in full the way a start would (the store's own restore code, into
 * a scratch store that keeps no asset, a line at a time) on a worker thread, so a large snapshot
 * neither blocks the event loop nor doubles the server's memory. Resolves when the file restores cleanly; rejects saying why not.
 */
export const checkSnapshotFile = (path: string): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const worker = startWorker(import.meta.url, 'snapshot-check.worker', { workerData: { path } });
    let answered = false;
    worker.once('message', (answer: SnapshotCheckAnswer) => {
      answered = true;
      if (answer.ok) resolve();
      else reject(new Error(answer.error));
    });
    worker.once('error', (error) => {
      answered = true;
      reject(error);
    });
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`the snapshot check thread exited (${code}) without an answer`));
    });
  });
