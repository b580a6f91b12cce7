import { Worker } from 'node:worker_threads';
import type { WorkerOptions } from 'node:worker_threads';

/**
 * Starts the worker module `<name>.ts` or `<name>.js` that sits beside the module `from` (its
 * `import.meta.url`). Run from source (tsx), the sibling is TypeScript and a worker does not
 * inherit the parent's `--import tsx` hooks, so it registers them itself before importing the
 * entry; the built server runs the compiled file directly.
 */
export const startWorker = (from: string, name: string, options: WorkerOptions = {}): Worker => {
  const fromSource = from.endsWith('.ts');
  const entry = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, from);
  if (!fromSource) return new Worker(entry, options);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return new Worker(`import(${tsx}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`, { ...options, eval: true });
};
