import type { App } from '../../platform/http/types.js';
import { playbackCatalogRoutes } from './playback-catalog.routes.js';
import type { PlaybackEdge } from './playback-edge.module.js';
import { playRoutes } from './play.routes.js';

/**
 * The playback edge's routes: `/play/...` at the root (the signed URL is the auth) and the
 * playback catalogue under `apiPrefix`. The edge is read from the runtime per request, so a
 * test can swap in one built with fake ports.
 */
export async function playbackEdgeRoutes(root: App, runtime: { playbackEdge: PlaybackEdge }, apiPrefix: string): Promise<void> {
  await playRoutes(root, () => runtime.playbackEdge.service);
  await root.register(
    async (api) => playbackCatalogRoutes(api, { catalog: () => runtime.playbackEdge.catalog, drm: () => runtime.playbackEdge.drm }),
    { prefix: apiPrefix },
  );
}
