import type { AuthPolicy } from './auth-hook.js';
import type { App } from './types.js';

export interface RouteEntry {
  method: string;
  url: string;
  /** The policy the route declares in `config.auth`; undefined when it declares none (the auth hook then applies 'api'). */
  auth: AuthPolicy | undefined;
}

const tables = new WeakMap<object, RouteEntry[]>();

/** Records every route as it is added, with its declared auth policy (register before any route). */
export function recordRoutes(app: App): void {
  const table: RouteEntry[] = [];
  tables.set(app, table);
  app.addHook('onRoute', (route) => {
    // Read when asked, not now: a plugin's own onRoute hook (they run after this one) may still set it.
    const authOf = () => (route.config as { auth?: AuthPolicy } | undefined)?.auth;
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      table.push({ method: String(method), url: route.url, get auth() { return authOf(); } });
    }
  });
}

/** The routes an app has, for `playline routes`-style listings, the OpenAPI completeness test and the route security suite. */
export const routesOf = (app: App): RouteEntry[] => tables.get(app) ?? [];
