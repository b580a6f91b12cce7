import { Worker } from 'node:worker_threads';

/** What the check thread answers. */
export type SnapshotCheckAnswer = { ok: true; assets: number } | { ok: false; error: string };

const here = import.meta.url;
/** Run from source (tsx): the worker must load TypeScript too; the built server runs the compiled file. */
const fromSource = here.endsWith('.ts');
const entry = new URL(`./snapshot-check.worker.${fromSource ? 'ts' : 'js'}`, here);

/**
 * Reads a snapshot file back in full the way a start would (the store's own restore code, into
 * a scratch store that keeps no asset, a line at a time) on a worker thread, so a large snapshot
 * neither blocks the event loop nor doubles the server's memory. Resolves when the file restores cleanly; rejects saying why not.
 */
export const checkSnapshotFile = (path: string): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const workerData = { path };
    // A worker does not inherit the parent's `--import tsx` hooks: from source, it registers them itself.
    const worker = fromSource
      ? new Worker(`import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`, { eval: true, workerData })
      : new Worker(entry, { workerData });
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
