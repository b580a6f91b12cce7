import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http/types.js';
import { defaultDashboardAssets, type DashboardAsset, type DashboardAssets } from './dashboard-assets.js';

export interface DashboardRouteOptions {
  /** Where the files come from; default: the build beside the server, or its sources (see dashboard-assets.ts). */
  assets?: DashboardAssets;
}

/**
 * What the page may do: its own scripts and styles, API calls and playback (the player) on this
 * origin, nothing else.
 * `form-action 'none'` keeps any form (sign-in included) from ever submitting to a URL.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  // The asset view's player: hls.js feeds the video element through a MediaSource (a blob: URL).
  "media-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The icon browsers ask every origin for (`/favicon.ico`): a play mark in the dashboard's accent, as SVG (every current browser takes it there). */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2563eb"/><path d="M12 9v14l11-7z" fill="#fff"/></svg>';

const FileParams = Type.Object({ file: Type.String({ pattern: '^[A-Za-z0-9_-][A-Za-z0-9._-]*$', maxLength: 128 }) });

const accepts = (request: FastifyRequest, encoding: string): boolean => {
  const header = request.headers['accept-encoding'];
  return typeof header === 'string' && header.split(',').some((part) => part.trim().split(';')[0] === encoding && !/;\s*q=0(\.0*)?\s*$/.test(part));
};

const matches = (request: FastifyRequest, etag: string): boolean => {
  const header = request.headers['if-none-match'];
  return typeof header === 'string' && header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
};

function send(request: FastifyRequest, reply: FastifyReply, asset: DashboardAsset, page: boolean): FastifyReply {
  void reply
    .header('content-type', asset.contentType)
    .header('etag', asset.etag)
    .header('vary', 'accept-encoding')
    .header('x-content-type-options', 'nosniff')
    // The page itself is revalidated on every load (cheap, 304) so a new build shows at once;
    // its assets have content hashes in their names and never change.
    .header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  if (page) {
    void reply
      .header('content-security-policy', DASHBOARD_CSP)
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cross-origin-opener-policy', 'same-origin');
  }
  if (matches(request, asset.etag)) return reply.code(304).send();
  if (asset.gzip && accepts(request, 'gzip')) return reply.header('content-encoding', 'gzip').send(asset.gzip);
  return reply.send(asset.body);
}

/**
 * The operator dashboard at `/dashboard`: a static page and its assets, public (auth 'none');
 * the page signs its own API calls with the key the user signs in with.
 */
export async function dashboardRoutes(app: App, options: DashboardRouteOptions = {}): Promise<void> {
  const assets = options.assets ?? defaultDashboardAssets(app.log);

  app.get('/dashboard', { config: { auth: 'none' }, schema: { hide: true } }, async (request, reply) => {
    const page = await assets.get('index.html');
    if (!page) throw new AppError('service_unavailable', 'The dashboard build has no index.html: run `npm run build`');
    return send(request, reply, page, true);
  });

  app.get('/favicon.ico', { config: { auth: 'none' }, schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=86400').header('x-content-type-options', 'nosniff').send(FAVICON_SVG),
  );

  app.get('/dashboard/assets/:file', { config: { auth: 'none' }, schema: { hide: true, params: FileParams } }, async (request, reply) => {
    const asset = await assets.get(`assets/${request.params.file}`);
    if (!asset) throw new AppError('not_found', `No dashboard asset ${request.params.file} (the page may be from an older build: reload it)`);
    return send(request, reply, asset, false);
  });
}
