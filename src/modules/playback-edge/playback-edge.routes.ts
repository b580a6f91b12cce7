import type { App } from '../../platform/http/types.js';
import type { PlaybackEdgeService } from './playback-edge.service.js';
import type { PlaybackSessionService } from './playback-session.service.js';
import { playRoutes, registerPlaybackCors } from './play.routes.js';
import { refusalLimiter, type RefusalLimitSettings } from './refusal-limit.js';
import { sessionRoutes, type MediaAccel } from './session.routes.js';

export interface PlayRouteDeps {
  service: PlaybackEdgeService;
  sessions: PlaybackSessionService;
  refusalLimit: RefusalLimitSettings;
  /** PLAYLINE_MEDIA_ACCEL_PREFIX and the media root: session files are answered with X-Accel-Redirect (the nginx front). */
  mediaAccel?: MediaAccel | undefined;
}

/**
 * The playback edge's `/play/...` routes, at the root: the signed URL or session token is the
 * auth. (The playback catalogue is under the API prefix: playbackCatalogRoutes.) Tests give the
 * runtime an edge on fake ports through `RuntimeOverrides.playbackEdge`, never by swapping it here.
 */
export async function playbackEdgeRoutes(root: App, edge: PlayRouteDeps): Promise<void> {
  // A context of its own under /play: the CORS hook and the rate-limit plugin stay inside it.
  await root.register(
    async (play) => {
      registerPlaybackCors(play);
      const gate = await refusalLimiter(play, edge.refusalLimit);
      await playRoutes(play, edge.service, gate);
      await sessionRoutes(play, edge.sessions, gate, edge.mediaAccel);
    },
    { prefix: '/play' },
  );
}
