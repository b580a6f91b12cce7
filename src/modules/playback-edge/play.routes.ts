import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../platform/errors.js';
import { problemResponses, toProblem } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import type { PlaybackEdgeService, RefusalGate } from './playback-edge.service.js';
import { problemCodeOf } from './playback-failure.js';
import { PlayParams, PlayQuery } from './playback-edge.schema.js';
import type { ContentKind } from './playback-token.js';

export const HLS_CONTENT_TYPE = 'application/vnd.apple.mpegurl';

const description =
  'The token is the authentication: `sig` is the lowercase hex HMAC-SHA256 of the query text before `&sig=` ' +
  '(appended last), keyed by an API key of `oid` or by the application key named in `kid`. A refused URL answers ' +
  'problem+json whose `playback_error_code` (also the `x-playback-error-code` header) is the playback error code ' +
  'counted in the statistics and reported to the owner\'s callback. A client address past its limit of refused ' +
  'playbacks gets 429 `throttled` with `Retry-After` for further refusals, counted and reported nowhere; its valid playbacks are still served.';

const schema = (summary: string) => ({
  tags: ['playback'],
  summary,
  description,
  security: [],
  params: PlayParams,
  querystring: PlayQuery,
  response: {
    200: { description: 'HLS media playlist', content: { [HLS_CONTENT_TYPE]: { schema: Type.String() } } },
    ...problemResponses(400, 403, 404, 409, 410, 422, 429, 500, 504),
  },
});

/** `GET /play/<asset_id>.m3u8` and `GET /play/event/<event_id>.m3u8` (outside /api/v4; the signed URL is the auth). */
export async function playRoutes(app: App, edge: PlaybackEdgeService, refusalGate: (request: FastifyRequest) => RefusalGate): Promise<void> {
  const handler = (kind: ContentKind) => async (request: FastifyRequest<{ Params: { file: string } }>, reply: FastifyReply) => {
    const file = request.params.file;
    const dot = file.lastIndexOf('.');
    const rawUrl = request.raw.url ?? '';
    const q = rawUrl.indexOf('?');
    const result = await edge.play({
      kind,
      contentId: dot > 0 ? file.slice(0, dot) : file,
      format: dot > 0 ? file.slice(dot + 1) : '',
      rawQuery: q >= 0 ? rawUrl.slice(q + 1) : '',
      clientIp: request.ip,
      url: `${request.protocol}://${request.host}${rawUrl}`,
      userAgent: request.headers['user-agent'] ?? '',
      refusalGate: refusalGate(request),
    });
    if (result.ok) {
      return reply.header('cache-control', 'no-store').type(HLS_CONTENT_TYPE).send(result.playlist);
    }
    if (result.throttled) {
      const { retryAfterS } = result.throttled;
      const problem = toProblem(new AppError('throttled', `Too many refused playbacks from this address: retry in ${retryAfterS} s`), request.id);
      return reply.code(429).header('retry-after', String(retryAfterS)).header('cache-control', 'no-store').type('application/problem+json').send(problem);
    }
    const f = result.failure;
    const problem = toProblem(new AppError(problemCodeOf[f.httpStatus], f.message, { extra: { playback_error_code: f.errorCode } }), request.id);
    return reply
      .code(f.httpStatus)
      .header('x-playback-error-code', String(f.errorCode))
      .header('cache-control', 'no-store')
      .type('application/problem+json')
      .send(problem);
  };

  // attachValidation: the query schema documents the parameters; the edge judges them itself.
  const options = (summary: string) => ({ config: { auth: 'none' as const }, exposeHeadRoute: false, attachValidation: true, schema: schema(summary) });
  app.get('/play/event/:file', options('Play a live event: an HLS media playlist for a signed playback URL'), handler('event'));
  app.get('/play/:file', options('Play an asset: an HLS media playlist for a signed playback URL'), handler('asset'));
}
