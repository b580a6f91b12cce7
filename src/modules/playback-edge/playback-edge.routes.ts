import type { App } from '../../platform/http/types.js';
import { playbackCatalogRoutes } from './playback-catalog.routes.js';
import type { PlaybackEdge } from './playback-edge.module.js';
import { playRoutes } from './play.routes.js';
import { refusalLimiter } from './refusal-limit.js';

/**
 * The playback edge's routes: `/play/...` at the root (the signed URL is the auth) and the
 * playback catalogue under `apiPrefix`. Tests give the runtime an edge on fake ports through
 * `RuntimeOverrides.playbackEdge`, never by swapping it here.
 */
export async function playbackEdgeRoutes(root: App, edge: Pick<PlaybackEdge, 'service' | 'catalog' | 'drm' | 'refusalLimit'>, apiPrefix: string): Promise<void> {
  // A context of its own: the rate-limit plugin it registers stays inside.
  await root.register(async (play) => playRoutes(play, edge.service, await refusalLimiter(play, edge.refusalLimit)));
  await root.register(async (api) => playbackCatalogRoutes(api, { catalog: edge.catalog, drm: edge.drm }), { prefix: apiPrefix });
}
