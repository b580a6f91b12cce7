import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { LiveStreamDescriber } from '../../platform/media/live-stream-inf.js';
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
export async function pullRoutes(app: App, deps: { db: SyndicationDb; mediaRoot: string }): Promise<void> {
  const describer = new LiveStreamDescriber();
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
    const found = await resolvePull(deps.db, deps.mediaRoot, targetId, token, file);
    reply.header('content-type', found.contentType).header('access-control-allow-origin', '*');
    if (found.playlist) {
      const text = await readFile(found.path, 'utf8');
      // The window's index.m3u8 as ffmpeg wrote it misdescribes a passthrough stream: described from the window instead.
      return reply.header('cache-control', 'no-cache').send(found.multivariant ? await describer.describeIndex(dirname(found.path), text) : text);
    }
    // A segment: streamed as bytes (the typed reply only knows the playlist's string).
    return (reply as FastifyReply).header('cache-control', 'max-age=60').send(createReadStream(found.path));
  });
}
