import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../platform/errors.js';
import { problemResponses, toProblem } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { CMCD_REQUEST_HEADERS, cmcdSignals, splitCmcdQuery } from './cmcd.js';
import type { PlaybackEdgeService } from './playback-edge.service.js';
import { problemCodeOf, type PlaybackFailure } from './playback-failure.js';
import type { RefusalGate } from './playback-refusals.js';
import { PlayParams, PlayQuery } from './playback-edge.schema.js';
import type { ContentKind } from './playback-token.js';

export const HLS_CONTENT_TYPE = 'application/vnd.apple.mpegurl';

const description =
  'The token is the authentication: `sig` is the lowercase hex HMAC-SHA256 of the query text before `&sig=` ' +
  '(appended last), keyed by an API key of `oid` or by the application key named in `kid`. A `CMCD` parameter ' +
  '(players append it, after `sig` too) is never part of the signed text. A valid URL answers a multivariant ' +
  'playlist whose variants and segments live under a new playback session\'s path `/play/s/<token>/...`. A refused URL answers ' +
  'problem+json whose `playback_error_code` (also the `x-playback-error-code` header) is the playback error code ' +
  'counted in the statistics and reported to the owner\'s callback. `HEAD` answers the same status and headers without a body and is ' +
  'no playback: it emits no statistics event and no report, and leaves a single-use `pbs` unused. A client address past its limit of refused ' +
  'playbacks gets 429 `throttled` with `Retry-After` for further refusals, counted and reported nowhere; its valid playbacks are still served.';

const schema = (summary: string) => ({
  tags: ['playback'],
  summary,
  description,
  security: [],
  params: PlayParams,
  querystring: PlayQuery,
  response: {
    200: { description: 'HLS multivariant playlist', content: { [HLS_CONTENT_TYPE]: { schema: Type.String() } } },
    ...problemResponses(400, 403, 404, 409, 410, 422, 429, 500, 504),
  },
});

/** What every edge answer needs: any origin may play (players live on other sites), and read these headers. */
const EXPOSED_HEADERS = 'Content-Length, Content-Range, Accept-Ranges, Retry-After, X-Playback-Error-Code, X-Request-Id';

/**
 * CORS for every `/play` answer (they are public: the signed URL or token is the credential, and
 * no cookie is ever read) and the preflight a player sends for `Range` or CMCD request headers.
 */
export function registerPlaybackCors(app: App): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', EXPOSED_HEADERS).header('timing-allow-origin', '*');
    done();
  });
  app.options('/*', { config: { auth: 'none' }, schema: { hide: true } }, async (_request, reply) =>
    reply
      .code(204)
      .header('access-control-allow-methods', 'GET, HEAD, OPTIONS')
      .header('access-control-allow-headers', ['Range', ...CMCD_REQUEST_HEADERS].join(', '))
      .header('access-control-max-age', '86400')
      .send());
}

/** The raw query of a request (after `?`), as sent. */
export const rawQueryOf = (request: FastifyRequest): string => {
  const rawUrl = request.raw.url ?? '';
  const q = rawUrl.indexOf('?');
  return q >= 0 ? rawUrl.slice(q + 1) : '';
};

/** The full URL as requested (an Error Report's `url`). */
export const requestedUrl = (request: FastifyRequest): string => `${request.protocol}://${request.host}${request.raw.url ?? ''}`;

/** A refused playback or session request: 429 when throttled, else problem+json with its playback error code. */
export function sendRefusal(request: FastifyRequest, reply: FastifyReply, refused: PlaybackFailure, throttled: { retryAfterS: number } | undefined): FastifyReply {
  if (throttled) {
    const { retryAfterS } = throttled;
    const problem = toProblem(new AppError('throttled', `Too many refused playbacks from this address: retry in ${retryAfterS} s`), request.id);
    return reply.code(429).header('retry-after', String(retryAfterS)).header('cache-control', 'no-store').type('application/problem+json').send(problem);
  }
  const problem = toProblem(new AppError(problemCodeOf[refused.httpStatus], refused.message, { extra: { playback_error_code: refused.errorCode } }), request.id);
  return reply
    .code(refused.httpStatus)
    .header('x-playback-error-code', String(refused.errorCode))
    .header('cache-control', 'no-store')
    .type('application/problem+json')
    .send(problem);
}

/**
 * `GET /play/<asset_id>.m3u8` and `GET /play/event/<event_id>.m3u8` (register with the `/play`
 * prefix, outside /api/v4: the signed URL is the auth).
 */
export async function playRoutes(app: App, edge: PlaybackEdgeService, refusalGate: (request: FastifyRequest) => RefusalGate): Promise<void> {
  const handler = (kind: ContentKind) => async (request: FastifyRequest<{ Params: { file: string } }>, reply: FastifyReply) => {
    const file = request.params.file;
    const dot = file.lastIndexOf('.');
    const { query, cmcd } = splitCmcdQuery(rawQueryOf(request));
    const result = await edge.play({
      kind,
      contentId: dot > 0 ? file.slice(0, dot) : file,
      format: dot > 0 ? file.slice(dot + 1) : '',
      rawQuery: query,
      clientIp: request.ip,
      url: requestedUrl(request),
      userAgent: request.headers['user-agent'] ?? '',
      refusalGate: refusalGate(request),
      cmcd: cmcdSignals(cmcd, request.headers),
      method: request.method === 'HEAD' ? 'HEAD' : 'GET',
    });
    // Each answer starts a new session: never cached.
    if (result.ok) return reply.header('cache-control', 'no-store').type(HLS_CONTENT_TYPE).send(result.playlist);
    return sendRefusal(request, reply, result.failure, result.throttled);
  };

  // attachValidation: the query schema documents the parameters; the edge judges them itself.
  // HEAD is routed here too (not Fastify's automatic HEAD route, which would run the GET handler and count a play).
  const route = (url: string, summary: string, kind: ContentKind) =>
    app.route({ method: ['GET', 'HEAD'], url, config: { auth: 'none' }, attachValidation: true, schema: schema(summary), handler: handler(kind) });
  route('/event/:file', 'Play a live event: an HLS playlist for a signed playback URL', 'event');
  route('/:file', 'Play an asset: an HLS multivariant playlist for a signed playback URL', 'asset');
}
