import { stat } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { send } from '@fastify/send';
import { AppError } from '../../platform/errors.js';
import { problemResponses, toProblem } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { cmcdSignals, splitCmcdQuery } from './cmcd.js';
import { HLS_CONTENT_TYPE, rawQueryOf, requestedUrl, sendRefusal } from './play.routes.js';
import type { RefusalGate } from './playback-refusals.js';
import type { PlaybackSessionService, SessionAnswer } from './playback-session.service.js';

const MP4 = 'video/mp4';
/** Reads of 256 KiB: a 2.6 MB 1080p segment in 10 reads and socket writes instead of 41 of the default 64 KiB (profiled: 1 and 4 MiB buffers cost more in GC than they save in calls). */
const READ_BUFFER_BYTES = 256 * 1024;
/** Segments and init segments never change under their session's path (the token fixes the asset and the plan). */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** A session's variant playlist is fixed too, but short-lived so a deleted asset stops being served soon. */
export const PLAYLIST_CACHE = 'public, max-age=10';

// One wildcard rather than a `:token` parameter: tokens (~300-500 characters) are longer than the
// router's parameter limit, which keeps protecting every other route.
const SessionParams = Type.Object({
  '*': Type.String({ description: '`<token>/v/<rendition>.m3u8`, `<token>/c/<file>` (content) or `<token>/a/<n>/<file>` (the n-th preroll ad): the token comes from the multivariant playlist' }),
});

const sessionSchema = {
  tags: ['playback'],
  summary: 'A playback session\'s variant playlists, init segments and media segments',
  description:
    'The URIs of a multivariant playlist answered by `/play/<asset_id>.m3u8`: the token (HMAC-signed by the server, ' +
    'expiring with the playback URL) is the authentication. Segments support byte ranges (`Range` → 206, 416 when ' +
    'unsatisfiable) and are cacheable for a year. CMCD from the `CMCD` query parameter or `CMCD-*` headers is read. ' +
    'An expired token answers 410 (playback error 104), a forged one 403 (110), a file the session does not have 404 (999). ' +
    'Live sessions are LL-HLS (RFC 8216bis): a variant playlist asked for with ' +
    '`_HLS_msn` (and `_HLS_part`) is held until that segment (part) exists, at most three target durations (then 503 with Retry-After); ' +
    'a request more than two segments past the live edge, or `_HLS_part` alone, answers 400; held requests are capped per instance ' +
    '(503) and per client network (429). A part announced by EXT-X-PRELOAD-HINT and asked for early is held the same way.',
  security: [],
  params: SessionParams,
  response: {
    200: {
      description: 'A variant playlist (HLS) or an fMP4 init or media segment',
      content: { [HLS_CONTENT_TYPE]: { schema: Type.String() }, [MP4]: { schema: Type.String({ format: 'binary' }) } },
    },
    206: { description: 'Part of a segment (Range)', content: { [MP4]: { schema: Type.String({ format: 'binary' }) } } },
    ...problemResponses(400, 403, 404, 410, 416, 429, 500, 503),
  },
};

type SessionRequest = FastifyRequest<{ Params: { '*': string } }>;

/** Streams a session's file with `@fastify/send`: Range (206/416), conditional GET (304), HEAD; no directory listing, no dotfile. */
async function sendFile(request: SessionRequest, reply: FastifyReply, answer: Extract<SessionAnswer, { kind: 'file' }>): Promise<FastifyReply> {
  const result = await send(request.raw, `/${answer.file}`, { root: answer.dir, index: false, dotfiles: 'deny', cacheControl: false, contentType: false, acceptRanges: true, highWaterMark: READ_BUFFER_BYTES });
  if (result.type === 'file') {
    if (result.statusCode === 200 || result.statusCode === 206) answer.served();
    reply.code(result.statusCode).headers(result.headers).header('cache-control', answer.cacheControl ?? IMMUTABLE);
    if (result.statusCode !== 304) reply.type(MP4);
    return reply.send(result.stream);
  }
  result.stream.destroy();
  if (result.statusCode === 416) {
    const problem = toProblem(new AppError('range_not_satisfiable', 'The Range header asks for bytes outside the file'), request.id);
    return reply.code(416).header('content-range', result.headers['Content-Range'] ?? '').type('application/problem+json').send(problem);
  }
  if (result.statusCode === 404) {
    const refused = await answer.gone();
    return sendRefusal(request, reply, refused.failure, refused.throttled);
  }
  throw result.type === 'error' ? result.metadata.error : new AppError('internal_error', 'The file could not be sent');
}

/** An LL-HLS blocking reload not answered with its playlist (bad query, time limit, caps): problem+json, no playback error. */
function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError, retryAfterS: number | undefined): FastifyReply {
  if (retryAfterS !== undefined) reply.header('retry-after', String(retryAfterS));
  return reply.code(error.status).header('cache-control', 'no-store').type('application/problem+json').send(toProblem(error, request.id));
}

/**
 * The nginx front (PLAYLINE_MEDIA_ACCEL_PREFIX): nginx sends the bytes of a session's files from an
 * `internal` location mapped to the media root, once Playline has checked the request.
 */
export interface MediaAccel {
  /** The internal location, e.g. `/_playline_media/` (checked by the config: absolute, plain segments, a trailing slash). */
  prefix: string;
  /** The media root that location is mapped to (absolute). */
  root: string;
}

/**
 * Set by the front when its internal location found no file (its `error_page 404` hands the
 * request back): Playline then answers in-process, so a file that left the library gets the
 * session's refusal (404, playback error 999) as without the front. The front clears it on every
 * request it forwards; a client sending it straight to Playline only gets the bytes from Playline.
 */
export const MEDIA_INLINE_HEADER = 'x-playline-media-inline';

/**
 * The file's Cache-Control for the front to set on what it sends (`$upstream_http_x_playline_cache_control`):
 * not Cache-Control itself, which nginx would also keep on the answer it hands back (a 404).
 */
export const ACCEL_CACHE_CONTROL = 'x-playline-cache-control';

/**
 * Whether the front can be left to send this file: nginx answers a Range itself only when it is
 * satisfiable (RFC 9110 §14.1.2: one range starting inside the file, or a non-empty suffix), and
 * the session's first start or ad is counted only for a file that is there, as in-process. The
 * file is looked at (one stat) only then: a request with a Range, or a session's first segment.
 */
async function frontCanSend(request: SessionRequest, answer: Extract<SessionAnswer, { kind: 'file' }>): Promise<boolean> {
  const range = request.headers.range;
  const ranged = range !== undefined && range.startsWith('bytes=');
  if (!ranged && !answer.firstPending()) return true;
  let size: number;
  try {
    size = (await stat(`${answer.dir}${sep}${answer.file}`)).size;
  } catch {
    return false;
  }
  if (!ranged) return true;
  return range
    .slice(6)
    .split(',')
    .some((spec) => {
      const m = /^\s*(\d*)-(\d*)\s*$/.exec(spec);
      if (!m || (m[1] === '' && m[2] === '')) return false;
      return m[1] === '' ? Number(m[2]) > 0 && size > 0 : Number(m[1]) < size && (m[2] === '' || Number(m[2]) >= Number(m[1]));
    });
}

// Plain path segments only (no dot first, so no `..`, no dotfile): anything else is sent in-process, never redirected.
const ACCEL_PATH = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

/** `<prefix><path below the root>` for a file of a session, or undefined unless both the directory below the root and the file in it are plain paths. */
export function accelUriOf(accel: MediaAccel, dir: string, file: string): string | undefined {
  const below = relative(accel.root, dir);
  if (sep !== '/' || !ACCEL_PATH.test(below) || !ACCEL_PATH.test(file)) return undefined;
  return `${accel.prefix}${below}/${file}`;
}

/**
 * The front sends the file (Range, conditional GET, HEAD, sendfile): Playline's empty answer names
 * it, its Content-Type (nginx keeps it through the redirect) and its Cache-Control (for the front's
 * add_header). The session's first start or ad is counted here, as in-process once the file is sent.
 */
function accelFile(reply: FastifyReply, answer: Extract<SessionAnswer, { kind: 'file' }>, uri: string): FastifyReply {
  answer.served();
  return reply.code(200).header('x-accel-redirect', uri).header(ACCEL_CACHE_CONTROL, answer.cacheControl ?? IMMUTABLE).type(MP4).send();
}

/** `GET|HEAD /play/s/<token>/...` (register with the `/play` prefix, in the context of playRoutes for CORS and the refusal limit). */
export async function sessionRoutes(app: App, sessions: PlaybackSessionService, refusalGate: (request: FastifyRequest) => RefusalGate, accel?: MediaAccel): Promise<void> {
  app.route({
    method: ['GET', 'HEAD'],
    url: '/s/*',
    config: { auth: 'none' },
    attachValidation: true,
    schema: sessionSchema,
    handler: async (request: SessionRequest, reply) => {
      // A held blocking reload is let go when its client leaves.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const rest = request.params['*'];
      const slash = rest.indexOf('/');
      const answer = await sessions.serve({
        token: slash >= 0 ? rest.slice(0, slash) : rest,
        path: slash >= 0 ? rest.slice(slash + 1) : '',
        method: request.method === 'HEAD' ? 'HEAD' : 'GET',
        url: requestedUrl(request),
        clientIp: request.ip,
        userAgent: request.headers['user-agent'] ?? '',
        refusalGate: refusalGate(request),
        cmcd: cmcdSignals(splitCmcdQuery(rawQueryOf(request)).cmcd, request.headers),
        signal: gone.signal,
      });
      if (answer.kind === 'refused') return sendRefusal(request, reply, answer.failure, answer.throttled);
      if (answer.kind === 'problem') return sendProblem(request, reply, answer.error, answer.retryAfterS);
      if (answer.kind === 'playlist') return reply.header('cache-control', answer.live ? 'no-store' : PLAYLIST_CACHE).type(HLS_CONTENT_TYPE).send(answer.text);
      if (accel && request.headers[MEDIA_INLINE_HEADER] === undefined) {
        const uri = accelUriOf(accel, answer.dir, answer.file);
        // Else in-process: nginx's own 416 would keep the headers of the 200 it meant to send, and a missing file gets its refusal here.
        if (uri !== undefined && (await frontCanSend(request, answer))) return accelFile(reply, answer, uri);
      }
      return sendFile(request, reply, answer);
    },
  });
}
