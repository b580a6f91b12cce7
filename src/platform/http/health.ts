import type { Storage } from '../db/database.js';
import type { StorageHealth } from '../db/storage-health.js';
import { AppError } from '../errors.js';
import type { App } from './types.js';

/** Liveness (the process answers) and readiness (storage reachable and writable). */
export function registerHealth(app: App, storage: Storage, health: StorageHealth): void {
  app.get('/healthz', { config: { auth: 'none' }, schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { auth: 'none' }, schema: { hide: true } }, async () => {
    try {
      await storage.ping();
    } catch (err) {
      throw new AppError('service_unavailable', 'Storage is not reachable', { cause: err });
    }
    const full = await health.problem();
    if (full !== undefined) throw new AppError('storage_full', `Not ready: ${full}`);
    return { status: 'ready', storage: storage.engine };
  });
}
