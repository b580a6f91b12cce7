import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { rm } from 'node:fs/promises';
import { AppError } from '../../platform/errors.js';
import { ReceivedFile } from '../../platform/http/body-file.js';
import { releaseWithReply, type BytesLease } from '../../platform/http/bytes-in-flight.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { HLS_PUSH_MAX_BYTES, type HlsPushGrant, type HlsPushReceiver } from './hls-push.js';
import type { LiveInputHold } from './live-storage.js';

const HlsPushParams = Type.Object({
  owner: Type.String({ minLength: 1, maxLength: 128, description: 'The slicer\'s workspace' }),
  slicer: Type.String({ minLength: 1, maxLength: 128, description: 'Slicer ID' }),
  token: Type.String({ minLength: 1, maxLength: 128, description: 'The token of the slicer\'s ingest_url' }),
  file: Type.String({ minLength: 1, maxLength: 128, description: 'Playlist or segment file name (.m3u8, .ts, .m4s, .mp4, .aac)' }),
});

const description =
  'The `ingest_url` of a slicer whose `ingest_protocol` is `hls`: an encoder pushes its HLS output here ' +
  '(`ffmpeg ... -f hls -method PUT <ingest_url>`), playlist and segments beside it. The token in the path is the ' +
  `credential, checked before the body is read. A segment is at most ${HLS_PUSH_MAX_BYTES} bytes; a playlist may ` +
  'name only files pushed beside it. The slicer\'s input folder holds at most PLAYLINE_HLS_PUSH_MAX_FILES files (409 `quota_exceeded` beyond) ' +
  'and PLAYLINE_HLS_PUSH_MAX_FOLDER_BYTES bytes, and every push counts in the workspace\'s storage quota (507 `storage_quota_exceeded` beyond either).';

/** Seconds an encoder refused for lack of room is told to wait (Retry-After). */
const RETRY_AFTER_S = 1;
const busy = () => new AppError('service_unavailable', `Too many pushed bytes are being received right now; retry in ${RETRY_AFTER_S} s`);

/** What a push request was granted in its onRequest hook, and its lease on the bytes in flight. */
interface PushInProgress {
  owner: string;
  slicer: string;
  grant: HlsPushGrant;
  lease: BytesLease;
}

/** `PUT|DELETE /ingest/hls/<owner>/<slicer>/<token>/<file>` (register with no prefix). */
export async function hlsPushRoutes(app: App, receiver: HlsPushReceiver): Promise<void> {
  const pushes = new WeakMap<FastifyRequest, PushInProgress>();
  const url = '/ingest/hls/:owner/:slicer/:token/:file';
  const tags = ['managed-slicers'];

  // Before any body: the URL must be a slicer's ingest URL and name a pushable file, and the
  // declared length must fit the bytes in flight. A refusal closes the connection unread.
  // The request's one lease is taken here and released once, with its answer (releaseWithReply):
  // nothing else gives bytes back, and a lease released cannot grow.
  const authorize = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const { owner, slicer, token, file } = request.params as { owner: string; slicer: string; token: string; file: string };
    const grant = await receiver.authorize(owner, slicer, token, file, request.ip);
    const declared = Number(request.headers['content-length'] ?? 0);
    const lease = receiver.inFlight.lease(Number.isSafeInteger(declared) && declared > 0 ? Math.min(declared, HLS_PUSH_MAX_BYTES) : 0);
    if (!lease) throw busy();
    releaseWithReply(reply, lease);
    pushes.set(request, { owner, slicer, grant, lease });
  };

  // The body streams to a temporary file of the slicer's folder; bytes beyond the declared
  // length (or all of them, chunked) are taken from the budget as they arrive.
  app.addContentTypeParser('*', async (request: FastifyRequest, payload: NodeJS.ReadableStream) => {
    const push = pushes.get(request);
    if (!push) throw new AppError('unsupported_media_type', 'Only PUT of a playlist or segment takes a body here');
    let counted = 0;
    const declared = request.headers['content-length'];
    return receiver.receive(push.grant, payload as Readable, declared === undefined ? undefined : Number(declared), (bytes) => {
      counted += bytes;
      if (!push.lease.growTo(counted)) throw busy();
    });
  });
  // Whatever ends the request, a received file that was not stored is removed.
  app.addHook('onResponse', async (request) => {
    if (request.body instanceof ReceivedFile) await rm(request.body.path, { force: true });
  });
  app.addHook('onError', async (request, reply, error) => {
    if (error instanceof AppError && error.code === 'service_unavailable') void reply.header('retry-after', String(RETRY_AFTER_S)).header('connection', 'close');
  });

  app.put(url, {
    config: { auth: 'none' },
    onRequest: async (request, reply) => {
      try {
        await authorize(request, reply);
      } catch (error) {
        // The body is never read: the connection closes with the answer.
        void reply.header('connection', 'close');
        throw error;
      }
    },
    schema: {
      tags, summary: 'Push a playlist or segment to an hls slicer', description, security: [], params: HlsPushParams,
      response: { 201: Type.Null({ description: 'Stored' }), ...problemResponses(400, 403, 404, 409, 413, 429, 503, 507) },
    },
  }, async (request, reply) => {
    const push = pushes.get(request);
    if (!push) throw new AppError('ingest_token_invalid', 'This is not the ingest URL of an hls slicer: use the ingest_url the slicer shows');
    const received = request.body instanceof ReceivedFile ? request.body : undefined;
    let hold: LiveInputHold;
    // Room in the slicer's input folder (files, bytes) and in the workspace's storage quota, held
    // until the file is in place (then it counts there). Decided once the body is in: encoders
    // (ffmpeg) send a whole segment and half-close at once, so a wait before the body is read
    // would lose it. A refused body is removed (it is at most HLS_PUSH_MAX_BYTES, within the bytes in flight).
    try {
      hold = await receiver.quota.admit(push.owner, push.slicer, push.grant.dir, push.grant.file, received?.bytes ?? 0);
    } catch (error) {
      if (received) await rm(received.path, { force: true });
      throw error;
    }
    try {
      await receiver.store(push.grant, received);
    } finally {
      // In place (it counts in its folder now) or refused: the hold goes, even if the client went away meanwhile.
      await receiver.quota.release(push.owner, hold);
    }
    return reply.code(201).send(null);
  });

  app.delete(url, {
    config: { auth: 'none' },
    schema: {
      tags, summary: 'Remove a segment an encoder pushed to an hls slicer', description, security: [], params: HlsPushParams,
      response: { 204: Type.Null({ description: 'Removed (or already gone)' }), ...problemResponses(400, 403, 404, 429) },
    },
  }, async (request, reply) => {
    const { owner, slicer, token, file } = request.params;
    await receiver.delete(owner, slicer, token, file, request.ip);
    return reply.code(204).send(null);
  });
}
