import { createReadStream } from 'node:fs';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { resolvePull } from './hls-pull.js';
import type { SyndicationDb } from './syndication.repository.js';

const PullParams = Type.Object({
  target_id: Type.String({ minLength: 1, maxLength: 64, description: 'The Custom hls target' }),
  token: Type.String({ minLength: 1, maxLength: 64, description: 'The token generated with the pull URL (its credential)' }),
  '*': Type.String({ description: 'playlist.m3u8, or a playlist or segment it names' }),
});

/**
 * `GET /syndication-pull/<target id>/<token>/<file>`: the generated pull URL of a Custom hls target
 * (outside /api/v4: players fetch it as is, so the token in the path is the credential).
 */
export async function pullRoutes(app: App, deps: { db: SyndicationDb; mediaRoot: string; clock: Clock }): Promise<void> {
  app.get('/syndication-pull/:target_id/:token/*', {
    config: { auth: 'none' },
    exposeHeadRoute: false,
    schema: {
      tags: ['syndication'],
      summary: 'The live stream of a Custom hls target whose schedule is active, at its generated pull URL',
      security: [],
      params: PullParams,
      response: {
        200: { description: 'An HLS playlist or segment of the live window', content: { 'application/vnd.apple.mpegurl': { schema: Type.String() }, 'video/iso.segment': { schema: Type.String({ format: 'binary' }) } } },
        ...problemResponses(404),
      },
    },
  }, async (request, reply) => {
    const { target_id: targetId, token, '*': file } = request.params;
    const found = await resolvePull(deps.db, deps.mediaRoot, targetId, token, file, deps.clock.now());
    reply.header('access-control-allow-origin', '*');
    // Playlists change every part: rendered from the live window's state, never cached.
    if (found.kind === 'playlist') return reply.header('content-type', 'application/vnd.apple.mpegurl').header('cache-control', 'no-cache').send(found.text);
    // A segment: streamed as bytes (the typed reply only knows the playlist's string).
    return (reply as FastifyReply).header('content-type', found.contentType).header('cache-control', 'max-age=60').send(createReadStream(found.path));
  });
}
