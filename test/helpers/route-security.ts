import type { LightMyRequestResponse } from 'fastify';
import { signV4 } from '../../src/platform/auth/v4-signature.js';
import { routesOf, type RouteEntry } from '../../src/platform/http/route-table.js';
import type { App } from '../../src/platform/http/types.js';

/**
 * The security cases every route gets, from the route table the app records (Unkey's
 * `runCommonRouteTests`, for the whole API at once):
 * - a route declares its auth policy (`config.auth`); one that declares none is reported;
 * - `api` and `ingest` routes: unsigned → 401 `missing_signature`, a wrong key → 401;
 *   `api` routes: an ingest key → 403 `key_kind_not_allowed`; `ingest` routes accept one;
 * - `admin` routes: no token → 401, an API key's signature instead → 401;
 * - `none` routes never ask for credentials;
 * - every signed route with a path parameter has an other-workspace case: what it names is
 *   made in workspace B, and A's request answers 404 (or 403 for a path naming a workspace),
 *   or, for routes that create or replace by name in the caller's workspace, leaves B's alone.
 * `routeSecurityProblems` returns every failure as a line; the suite asserts there is none.
 */

/** How a route's path parameters name something of workspace B, and what A's request must get. */
export interface OtherWorkspaceCase {
  /** Makes the thing in workspace B; returns the path parameters naming it. */
  params(): Promise<Record<string, string>>;
  /** A body valid for the route's schema (so that validation does not answer first). */
  body?: unknown;
  /**
   * The answer to A: 404 (default: B's resource does not exist for A), 403 (the path names another
   * workspace), or 503 (the module is unavailable on this machine, e.g. no ffmpeg: nothing to leak).
   */
  status?: 403 | 404 | 503;
  /**
   * For routes that create or replace by name within the caller's own workspace: any answer is
   * fine, but B's resource must be as it was. Returns what changed, or undefined.
   */
  unchanged?: (params: Record<string, string>) => Promise<string | undefined>;
}

/** Keyed `METHOD url` as the route table lists it (`GET /api/v4/syndication-target/:id`). */
export type OtherWorkspaceCases = Record<string, OtherWorkspaceCase>;

export interface RouteSecurityContext {
  app: App;
  /** Workspace A, whose credentials call every route. */
  owner: string;
  apiKey: string;
  ingestKey: string;
  adminToken: string;
  now: () => number;
  cases: OtherWorkspaceCases;
}

const PLACEHOLDER = 'f'.repeat(32);
const pathParams = (url: string): string[] => [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string);
const fill = (url: string, params: Record<string, string>) =>
  url.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? PLACEHOLDER));
const codeOf = (response: LightMyRequestResponse): string | undefined => {
  try {
    return (JSON.parse(response.body) as { code?: string }).code;
  } catch {
    return undefined;
  }
};

export async function routeSecurityProblems(ctx: RouteSecurityContext, routes: RouteEntry[] = routesOf(ctx.app)): Promise<string[]> {
  const problems: string[] = [];
  const signed = (key: string, owner = ctx.owner) => {
    const { msg, sig } = signV4(owner, key, Math.floor(ctx.now() / 1000));
    return `msg=${encodeURIComponent(msg)}&sig=${sig}`;
  };
  const send = (route: RouteEntry, url: string, options: { query?: string; headers?: Record<string, string>; body?: unknown } = {}) =>
    ctx.app.inject({
      method: route.method as 'GET',
      url: options.query ? `${url}?${options.query}` : url,
      headers: { ...options.headers, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(options.body === undefined ? {} : { payload: JSON.stringify(options.body) }),
    });
  const expect = (route: RouteEntry, what: string, response: LightMyRequestResponse, status: number, code?: string) => {
    // A HEAD answer has no body to read the code from.
    const wrongCode = code !== undefined && route.method !== 'HEAD' && codeOf(response) !== code;
    if (response.statusCode !== status || wrongCode) {
      const got = [response.statusCode, codeOf(response)].filter((x) => x !== undefined).join(' ');
      problems.push(`${route.method} ${route.url}: ${what}: answered ${got}, expected ${status}${code ? ` ${code}` : ''}`);
    }
  };

  for (const route of routes) {
    const url = fill(route.url, {});
    const where = `${route.method} ${route.url}`;
    if (route.auth === undefined) {
      problems.push(`${where}: declares no auth policy (set config.auth to 'api', 'ingest', 'admin' or 'none')`);
      continue;
    }
    if (route.auth === 'none') {
      const open = await send(route, url);
      if (open.statusCode === 401) problems.push(`${where}: declared 'none' but asks for credentials (401)`);
      continue;
    }
    if (route.auth === 'admin') {
      expect(route, 'no admin token', await send(route, url), 401, 'invalid_admin_token');
      expect(route, 'an API key signature instead of the admin token', await send(route, url, { query: signed(ctx.apiKey) }), 401, 'invalid_admin_token');
      continue;
    }
    expect(route, 'unsigned', await send(route, url), 401, 'missing_signature');
    expect(route, 'signed with a key that is not the owner\'s', await send(route, url, { query: signed('not-a-key-of-this-workspace') }), 401, 'invalid_signature');
    const byIngestKey = await send(route, url, { query: signed(ctx.ingestKey) });
    if (route.auth === 'api') expect(route, 'an ingest key', byIngestKey, 403, 'key_kind_not_allowed');
    else if (byIngestKey.statusCode === 401 || byIngestKey.statusCode === 403) problems.push(`${where}: refuses an ingest key (${[byIngestKey.statusCode, codeOf(byIngestKey)].filter((x) => x !== undefined).join(' ')})`);

    if (pathParams(route.url).length === 0 || route.method === 'HEAD') continue;
    const other = ctx.cases[where];
    if (!other) {
      problems.push(`${where}: has path parameters but no other-workspace case (add one to the route security suite)`);
      continue;
    }
    const params = await other.params();
    const response = await send(route, fill(route.url, params), { query: signed(ctx.apiKey), body: other.body });
    if (other.unchanged) {
      const changed = await other.unchanged(params);
      if (changed) problems.push(`${where}: workspace A changed workspace B's resource: ${changed}`);
    } else {
      expect(route, 'another workspace\'s resource', response, other.status ?? 404);
    }
  }
  return problems;
}
