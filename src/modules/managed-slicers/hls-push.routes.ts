import { Type } from '@sinclair/typebox';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { HLS_PUSH_MAX_BYTES, type HlsPushReceiver } from './hls-push.js';

const HlsPushParams = Type.Object({
  owner: Type.String({ minLength: 1, maxLength: 128, description: 'The slicer\'s workspace' }),
  slicer: Type.String({ minLength: 1, maxLength: 128, description: 'Slicer ID' }),
  token: Type.String({ minLength: 1, maxLength: 128, description: 'The token of the slicer\'s ingest_url' }),
  file: Type.String({ minLength: 1, maxLength: 128, description: 'Playlist or segment file name (.m3u8, .ts, .m4s, .mp4, .aac)' }),
});

const description =
  'The `ingest_url` of a slicer whose `ingest_protocol` is `hls`: an encoder pushes its HLS output here ' +
  '(`ffmpeg ... -f hls -method PUT <ingest_url>`), playlist and segments beside it. The token in the path is the ' +
  `credential. A file is at most ${HLS_PUSH_MAX_BYTES} bytes.`;

/** `PUT|DELETE /ingest/hls/<owner>/<slicer>/<token>/<file>` (register with no prefix). */
export async function hlsPushRoutes(app: App, receiver: HlsPushReceiver): Promise<void> {
  // Whatever the encoder says it sends, the body is kept as bytes (this plugin only).
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: HLS_PUSH_MAX_BYTES }, (_request, body, done) => done(null, body));
  const url = '/ingest/hls/:owner/:slicer/:token/:file';
  const tags = ['managed-slicers'];

  app.put(url, {
    config: { auth: 'none' },
    bodyLimit: HLS_PUSH_MAX_BYTES,
    schema: {
      tags, summary: 'Push a playlist or segment to an hls slicer', description, security: [], params: HlsPushParams,
      response: { 201: Type.Null({ description: 'Stored' }), ...problemResponses(400, 403, 404, 413) },
    },
  }, async (request, reply) => {
    const { owner, slicer, token, file } = request.params;
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    await receiver.put(owner, slicer, token, file, body);
    return reply.code(201).send(null);
  });

  app.delete(url, {
    config: { auth: 'none' },
    schema: {
      tags, summary: 'Remove a segment an encoder pushed to an hls slicer', description, security: [], params: HlsPushParams,
      response: { 204: Type.Null({ description: 'Removed (or already gone)' }), ...problemResponses(400, 403, 404) },
    },
  }, async (request, reply) => {
    const { owner, slicer, token, file } = request.params;
    await receiver.delete(owner, slicer, token, file);
    return reply.code(204).send(null);
  });
}
