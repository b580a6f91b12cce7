import type { App } from '../../platform/http/types.js';
import { playbackCatalogRoutes } from './playback-catalog.routes.js';
import type { PlaybackEdge } from './playback-edge.module.js';
import { playRoutes, registerPlaybackCors } from './play.routes.js';
import { refusalLimiter } from './refusal-limit.js';
import { sessionRoutes } from './session.routes.js';

/**
 * The playback edge's routes: `/play/...` at the root (the signed URL or session token is the
 * auth) and the playback catalogue under `apiPrefix`. Tests give the runtime an edge on fake
 * ports through `RuntimeOverrides.playbackEdge`, never by swapping it here.
 */
export async function playbackEdgeRoutes(root: App, edge: Pick<PlaybackEdge, 'service' | 'sessions' | 'catalog' | 'drm' | 'refusalLimit'>, apiPrefix: string): Promise<void> {
  // A context of its own under /play: the CORS hook and the rate-limit plugin stay inside it.
  await root.register(
    async (play) => {
      registerPlaybackCors(play);
      const gate = await refusalLimiter(play, edge.refusalLimit);
      await playRoutes(play, edge.service, gate);
      await sessionRoutes(play, edge.sessions, gate);
    },
    { prefix: '/play' },
  );
  await root.register(async (api) => playbackCatalogRoutes(api, { catalog: edge.catalog, drm: edge.drm }), { prefix: apiPrefix });
}
