import type { Storage } from '../db/database.js';
import { AppError } from '../errors.js';
import type { App } from './types.js';

/** Liveness (the process answers) and readiness (storage reachable). */
export function registerHealth(app: App, storage: Storage): void {
  app.get('/healthz', { config: { auth: 'none' }, schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { auth: 'none' }, schema: { hide: true } }, async () => {
    try {
      await storage.ping();
    } catch (err) {
      throw new AppError('service_unavailable', 'Storage is not reachable', { cause: err });
    }
    return { status: 'ready', storage: storage.engine };
  });
}
