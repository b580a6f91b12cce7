import type { App } from './types.js';

export interface RouteEntry {
  method: string;
  url: string;
}

const tables = new WeakMap<object, RouteEntry[]>();

/** Records every route as it is added (register before any route). */
export function recordRoutes(app: App): void {
  const table: RouteEntry[] = [];
  tables.set(app, table);
  app.addHook('onRoute', (route) => {
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) table.push({ method: String(method), url: route.url });
  });
}

/** The routes an app has, for `playline routes`-style listings and the OpenAPI completeness test. */
export const routesOf = (app: App): RouteEntry[] => tables.get(app) ?? [];
