import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { AppError } from '../../platform/errors.js';
import { authOf } from '../../platform/http/auth-hook.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { AssetCollection, AssetDeletedSchema, AssetListQuery, AssetParams, AssetSchema, AssetUpdateBody, TitleSchema, UploadQuery, uploadContentTypes } from './assets.schema.js';
import type { AssetService } from './assets.service.js';
import { ASSETS_PATH, assetCollectionView, assetDeletedView, assetView } from './assets.view.js';
import { ReceivedFile, receiveBodyFile } from '../../platform/http/body-file.js';
import type { StorageReservation } from '../../platform/quota/storage-quota.js';

/** The request's Content-Length as a number of bytes, when it gave a valid one. */
function declaredLength(request: FastifyRequest): number | undefined {
  const header = request.headers['content-length'];
  if (header === undefined) return undefined;
  const bytes = Number(header);
  return Number.isSafeInteger(bytes) && bytes >= 0 ? bytes : undefined;
}

export interface AssetRouteDeps {
  service: AssetService;
  /** PLAYLINE_MAX_UPLOAD_BYTES */
  maxUploadBytes: number;
}

const tags = ['assets'];
const UPLOAD_ROUTE = '/assets';

const UploadBody = Type.Unknown({ description: 'The media file itself (any container ffmpeg reads: MP4, MOV, MKV, WebM, MPEG-TS...), streamed' });
const UploadHeaders = Type.Object({
  'x-asset-title': Type.Optional(Type.String({ maxLength: 1000, description: 'The title, percent-encoded UTF-8 (instead of the title query parameter)' })),
});
const PosterResponse = { description: 'The poster image', content: { 'image/jpeg': { schema: Type.Unsafe<Readable>({ type: 'string', contentMediaType: 'image/jpeg' }) } } };

/** The title from the query, else from the X-Asset-Title header (percent-encoded UTF-8). */
function titleOf(query: Static<typeof UploadQuery>, header: unknown): string | undefined {
  if (query.title !== undefined) return query.title;
  if (typeof header !== 'string') return undefined;
  let title: string;
  try {
    title = decodeURIComponent(header);
  } catch {
    title = '';
  }
  if (!Value.Check(TitleSchema, title)) {
    throw new AppError('validation_failed', 'Invalid X-Asset-Title header', { errors: [{ path: '/headers/x-asset-title', message: 'must be a percent-encoded title of 1-200 characters' }] });
  }
  return title;
}

/** The path that was called, with its filters and page but without the signature. */
function selfPath(query: { state?: string | undefined; limit?: number | undefined }, cursor?: string): string {
  const params = new URLSearchParams();
  if (query.state !== undefined) params.set('state', query.state);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (cursor !== undefined) params.set('cursor', cursor);
  const search = params.toString();
  return search ? `${ASSETS_PATH}?${search}` : ASSETS_PATH;
}

const linkNext = (reply: FastifyReply, query: { state?: string | undefined; limit?: number | undefined }, next: string | undefined) => {
  if (next !== undefined) void reply.header('link', `<${selfPath(query, next)}>; rel="next"`);
};

/** The asset library: streamed uploads, packaged to HLS in the background. */
export async function assetRoutes(api: App, deps: AssetRouteDeps): Promise<void> {
  const { service } = deps;
  const tooLargeDetail = `An upload may be at most ${deps.maxUploadBytes} bytes (PLAYLINE_MAX_UPLOAD_BYTES)`;

  // Without ffmpeg and ffprobe the library is unavailable; everything else keeps working.
  api.addHook('onRequest', async () => service.assertAvailable());

  // The storage an upload holds in its workspace's quota, from before its body is read until it
  // became an asset (or failed: then it is given back).
  const holds = new WeakMap<FastifyRequest, StorageReservation>();
  const release = async (request: FastifyRequest) => {
    const hold = holds.get(request);
    if (!hold || hold.settled) return;
    holds.delete(request);
    await service.releaseUpload(hold);
  };

  // Uploads stream to a file of the media directory, on the upload route only (never buffered).
  const parseUpload = async (request: FastifyRequest, payload: NodeJS.ReadableStream) => {
    const hold = holds.get(request);
    if (request.method !== 'POST' || !request.routeOptions.url?.endsWith(UPLOAD_ROUTE) || !hold) {
      throw new AppError('unsupported_media_type', 'Only POST /api/v4/assets takes a media body');
    }
    const declared = declaredLength(request);
    let received = 0;
    return receiveBodyFile(payload as Readable, {
      path: service.newUploadPath(),
      limitBytes: deps.maxUploadBytes,
      tooLargeDetail,
      declaredBytes: declared,
      // A body longer than it declared, or without a length, holds more as it arrives: past the quota it is cut (507).
      onBytes: (bytes) => {
        received += bytes;
        return received > hold.bytes ? service.holdReceived(hold, received) : undefined;
      },
    });
  };
  api.addContentTypeParser('application/octet-stream', parseUpload);
  api.addContentTypeParser(/^(video|audio)\/[A-Za-z0-9!#$&^_.+-]+/, parseUpload);
  // Whatever ends the request (an error, an invalid title), an upload no asset took is removed.
  api.addHook('onResponse', async (request) => {
    if (request.body instanceof ReceivedFile) await rm(request.body.path, { force: true });
    await release(request);
  });
  api.addHook('onRequestAbort', release);

  // No route bodyLimit: the upload parser counts against PLAYLINE_MAX_UPLOAD_BYTES itself, and a
  // JSON body sent here by mistake keeps the 1 MiB default instead of being buffered up to 4 GiB.
  api.post(UPLOAD_ROUTE, {
    // Gigabytes take longer than the request deadline: a minimum rate applies instead.
    config: { auth: 'api', streamedBody: true },
    // A bad title is refused before the body is read, not after gigabytes arrived.
    onRequest: async (request) => {
      const query = request.query as Record<string, unknown>;
      if (query.title !== undefined && !Value.Check(TitleSchema, query.title)) {
        throw new AppError('validation_failed', 'Invalid title', { errors: [{ path: '/querystring/title', message: 'must be 1-200 characters, at least one visible, no control characters' }] });
      }
      titleOf({}, request.headers['x-asset-title']);
      // After the credentials (checked first) and before any byte of the body: the workspace's
      // asset quota, and its storage quota for the declared length (the connection then closes unread).
      const declared = declaredLength(request);
      if (declared !== undefined && declared > deps.maxUploadBytes) throw new AppError('payload_too_large', tooLargeDetail);
      holds.set(request, await service.admitUpload(authOf(request).owner, declared));
    },
    schema: {
      tags,
      summary: 'Upload a media file (the request body, streamed) as a new asset; it is packaged to HLS in the background',
      description:
        'Send the file as the body with `Content-Type` `video/*`, `audio/*` or `application/octet-stream` (at most ' +
        'PLAYLINE_MAX_UPLOAD_BYTES). The workspace\'s quotas apply before the body is read: 409 `quota_exceeded` at its asset quota, ' +
        '507 `storage_quota_exceeded` when the declared length (or, without one, the bytes as they arrive) would pass its storage quota; nothing is kept then. Answers 201 with the asset `uploaded` (or already `processing`); poll it until `ready` or `failed`. It plays from `playable` on, while still packaged (a growing EVENT playlist).',
      querystring: UploadQuery,
      headers: UploadHeaders,
      body: { content: Object.fromEntries(uploadContentTypes.map((type) => [type, { schema: UploadBody }])) },
      response: { 201: AssetSchema, ...problemResponses(400, 401, 409, 413, 415, 503, 507) },
    },
  }, async (request, reply) => {
    const body: unknown = request.body;
    if (body === undefined || body === null) throw new AppError('bad_request', 'Send the media file as the request body');
    if (!(body instanceof ReceivedFile)) {
      throw new AppError('unsupported_media_type', `Send the media file as the body with Content-Type ${uploadContentTypes.join(', ')}`);
    }
    // The per-content-type body schema hides the query's type from the type provider; the schema validated it.
    const title = titleOf(request.query as Static<typeof UploadQuery>, request.headers['x-asset-title']);
    const asset = await service.createFromUpload(authOf(request).owner, body, title, holds.get(request));
    void reply.code(201).header('location', `${ASSETS_PATH}/${asset.id}`);
    return assetView(asset);
  });

  api.get('/assets', {
    config: { auth: 'api' },
    schema: {
      tags, summary: 'List assets, newest first (next page in the Link header)', querystring: AssetListQuery,
      response: { 200: AssetCollection, ...problemResponses(400, 401, 503) },
    },
  }, async (request, reply) => {
    const page = await service.list(authOf(request).owner, request.query);
    linkNext(reply, request.query, page.nextCursor);
    return assetCollectionView(selfPath(request.query, request.query.cursor), page.items, page.total);
  });

  api.get('/assets/:id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'One asset: its state, packaging progress, renditions', params: AssetParams, response: { 200: AssetSchema, ...problemResponses(401, 404, 503) } },
  }, async (request) => assetView(await service.get(authOf(request).owner, request.params.id)));

  api.patch('/assets/:id', {
    config: { auth: 'api' },
    // AJV would silently drop keys the schema does not know: name them instead (`state` cannot be set).
    preValidation: async (request) => {
      const body = request.body;
      const unknown = body !== null && typeof body === 'object' ? Object.keys(body).filter((key) => key !== 'title') : [];
      if (unknown.length > 0) {
        throw new AppError('validation_failed', `Only the title can be changed; not ${unknown.join(', ')}`, { errors: unknown.map((key) => ({ path: `/${key}`, message: 'cannot be changed' })) });
      }
    },
    schema: {
      tags, summary: 'Change an asset\'s title', params: AssetParams, body: AssetUpdateBody,
      response: { 200: AssetSchema, ...problemResponses(400, 401, 404, 503) },
    },
  }, async (request) => assetView(await service.update(authOf(request).owner, request.params.id, request.body.title)));

  api.delete('/assets/:id', {
    config: { auth: 'api' },
    schema: {
      tags, summary: 'Delete an asset and its media (a packaging run of it stops)', params: AssetParams,
      response: { 200: AssetDeletedSchema, ...problemResponses(401, 404, 503) },
    },
  }, async (request) => {
    await service.delete(authOf(request).owner, request.params.id);
    return assetDeletedView(request.params.id);
  });

  api.post('/assets/:id/retry', {
    config: { auth: 'api' },
    schema: {
      tags, summary: 'Package a failed asset again from its kept upload (answers the asset, queued)', params: AssetParams,
      response: { 202: AssetSchema, ...problemResponses(401, 404, 409, 503) },
    },
  }, async (request, reply) => {
    const asset = await service.retry(authOf(request).owner, request.params.id);
    void reply.code(202);
    return assetView(asset);
  });

  api.get('/assets/:id/poster.jpg', {
    config: { auth: 'api' },
    schema: { tags, summary: 'The poster image of a ready asset', params: AssetParams, response: { 200: PosterResponse, ...problemResponses(401, 404, 503) } },
  }, async (request, reply) => {
    const path = await service.posterPath(authOf(request).owner, request.params.id);
    void reply.type('image/jpeg').header('cache-control', 'private, max-age=3600');
    return createReadStream(path);
  });
}
