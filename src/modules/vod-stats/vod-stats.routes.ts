import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../platform/errors.js';
import { assertOwnWorkspace, authOf } from '../../platform/http/auth-hook.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import type { EventIngest } from './ingest/event-ingest.js';
import { admitIngest, type IngestAdmission } from './ingest/ingest-admission.js';
import { IngestResultSchema, MAX_EVENT_BATCH_BYTES, PlaybackEventInputSchema } from './events.schema.js';
import {
  AllAssetsQuerySchema,
  AssetParamsSchema,
  HistoryQuerySchema,
  MAX_TOP,
  OwnerParamsSchema,
  SearchBodySchema,
  SearchQuerySchema,
  VodStatsCollectionSchema,
  VodStatsHistorySchema,
  VodStatsSchema,
  VodStatsSummarySchema,
} from './vod-stats.schema.js';
import { assetIdList } from './vod-stats.service.js';
import type { VodStatsService } from './vod-stats.service.js';
import { statsAdminRoutes } from './stats-admin.routes.js';
import type { StatsAdminService } from './stats-admin.service.js';
import { VOD_STATS_PATH, vodStatsCollectionJson, vodStatsHistoryBody, vodStatsJson, vodStatsSummaryBody } from './vod-stats.view.js';

export interface VodStatsRouteDeps {
  /** The ingest of the mode's backends (embedded or cluster pipeline), the queries, the admin rebuild. */
  vodStats: { ingest: EventIngest; service: VodStatsService; admin: StatsAdminService; admission: IngestAdmission };
}

const tags = ['vod-stats'];

const EventBatchBodySchema = Type.Array(PlaybackEventInputSchema, {
  description:
    'application/json: an array of events; application/x-ndjson: one event per line (at most 16 KiB a line). ' +
    'Each event is validated on its own: good ones are kept, bad ones reported by index.',
});

/**
 * Sends JSON text rendered by the view (the same bytes the response schema would serialize, see
 * vod-stats.view.test.ts), so an unchanged asset is rendered once however often it is read.
 */
const sendJson = (reply: FastifyReply, json: string): FastifyReply => reply.type('application/json; charset=utf-8').send(json);

const rawBody = (_request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: Buffer) => void) => done(null, body);

/** The validator would turn `"asset_ids": "a"` into `["a"]`; the contract says a list, so say so. */
const requireIdList = async (request: FastifyRequest): Promise<void> => {
  const body = request.body as { asset_ids?: unknown } | null | undefined;
  if (body !== null && typeof body === 'object' && body.asset_ids !== undefined && !Array.isArray(body.asset_ids)) {
    throw new AppError('validation_failed', 'asset_ids must be a list of asset ids', {
      errors: [{ path: '/asset_ids', message: 'must be an array' }],
    });
  }
};

/** Ingest, the four read-only statistics endpoints, and the admin rebuild. */
export async function vodStatsRoutes(api: App, deps: VodStatsRouteDeps): Promise<void> {
  const { ingest, service, admission } = deps.vodStats;
  await statsAdminRoutes(api, deps);

  // Events arrive as raw bytes in both content types: journaled exactly as received, then
  // validated event by event by the batch parser (a generic body validator would reject the
  // whole batch for one bad event). The schema documents the shape; it does not validate.
  await api.register(async (events) => {
    events.removeContentTypeParser('application/json');
    events.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: MAX_EVENT_BATCH_BYTES }, rawBody);
    events.addContentTypeParser('application/x-ndjson', { parseAs: 'buffer', bodyLimit: MAX_EVENT_BATCH_BYTES }, rawBody);
    events.post('/monitoring/events', {
      bodyLimit: MAX_EVENT_BATCH_BYTES,
      config: { auth: 'ingest' },
      // After authentication, before the body is read: bounded ingest bytes in flight (503 beyond).
      onRequest: admitIngest(admission),
      validatorCompiler: () => () => true,
      schema: {
        tags,
        summary: 'Ingest playback events (NDJSON or a JSON array, up to 16 MiB); 202 once journaled durably',
        description:
          "Each event's owner must be the signing workspace; an ingest key may also name the workspaces that granted its workspace an ingest grant. " +
          'The answer counts the accepted events (journaled and counted) and the rejected ones, and lists the first 100 ' +
          'rejected by index with a reason. 503 with Retry-After when too many event bytes are in flight on the instance.',
        consumes: ['application/x-ndjson', 'application/json'],
        body: EventBatchBodySchema,
        response: { 202: IngestResultSchema, ...problemResponses(400, 401, 403, 413, 415, 503) },
      },
    }, async (request, reply) => {
      const body: unknown = request.body;
      if (!Buffer.isBuffer(body)) throw new AppError('bad_request', 'Send the events as the request body');
      const auth = authOf(request);
      const contentType = request.headers['content-type'] ?? '';
      const kind = contentType.startsWith('application/x-ndjson') ? 'ndjson' : 'json';
      const result = await ingest.ingest(body, kind, { owner: auth.owner, kind: auth.keyKind });
      void reply.code(202);
      return result;
    });
  });

  api.get('/monitoring/vod-stats', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Latest statistics of the (top 1-100, default 100) assets with the most new sessions in their window',
      querystring: AllAssetsQuerySchema,
      response: { 200: VodStatsCollectionSchema, ...problemResponses(400, 401, 403) },
    },
  }, async (request, reply) => {
    const { owner, top } = request.query;
    const auth = owner === undefined ? authOf(request) : assertOwnWorkspace(request, owner);
    return sendJson(reply, vodStatsCollectionJson(VOD_STATS_PATH, await service.top(auth.owner, top ?? MAX_TOP)));
  });

  api.post('/monitoring/vod-stats/search', {
    config: { auth: 'api' },
    preValidation: requireIdList,
    schema: {
      tags,
      summary: 'Latest statistics of several assets (1-1000 ids; unknown ids are left out)',
      body: SearchBodySchema,
      response: { 200: VodStatsCollectionSchema, ...problemResponses(400, 401) },
    },
  }, async (request, reply) =>
    sendJson(reply, vodStatsCollectionJson(`${VOD_STATS_PATH}/search`, await service.search(authOf(request).owner, request.body.asset_ids))),
  );

  api.get('/monitoring/vod-stats/search', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Latest statistics of several assets, ids comma-separated in asset_ids (1-1000; unknown ids are left out)',
      querystring: SearchQuerySchema,
      response: { 200: VodStatsCollectionSchema, ...problemResponses(400, 401) },
    },
  }, async (request, reply) =>
    sendJson(reply, vodStatsCollectionJson(`${VOD_STATS_PATH}/search`, await service.search(authOf(request).owner, assetIdList(request.query.asset_ids)))),
  );

  api.get('/monitoring/vod-stats/owner-summary', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: "Your workspace's statistics of the last three minutes",
      response: { 200: VodStatsSummarySchema, ...problemResponses(401) },
    },
  }, async (request) => vodStatsSummaryBody(await service.summary(authOf(request).owner)));

  api.get('/monitoring/vod-stats/owner-summary/:workspace_id', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: "A workspace's statistics of the last three minutes (your own workspace only)",
      params: OwnerParamsSchema,
      response: { 200: VodStatsSummarySchema, ...problemResponses(401, 403) },
    },
  }, async (request) => {
    const auth = assertOwnWorkspace(request, request.params.workspace_id);
    return vodStatsSummaryBody(await service.summary(auth.owner));
  });

  api.get('/monitoring/vod-stats/history', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Per-minute history of your workspace, or of one asset (asset_id), over the last 15m/1h/6h/24h or from/to within the 24-hour serving window',
      description:
        'One point per UTC minute that holds any event (minutes without any are left out): new sessions, requests, ' +
        'errors by code and the error rate, manifest and ad latency (mean, min, max), rebuffer reports and startup time. ' +
        'from/to are Unix seconds: clamped to the serving window (the last 24 hours, up to now); a range wholly outside it is 400. ' +
        'The stats delay (PLAYLINE_STATS_DELAY_MS) applies as to every statistics endpoint.',
      querystring: HistoryQuerySchema,
      response: { 200: VodStatsHistorySchema, ...problemResponses(400, 401, 404) },
    },
  }, async (request) => vodStatsHistoryBody(await service.history(authOf(request).owner, request.query)));

  api.get('/monitoring/vod-stats/:asset_id', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: "Latest statistics of one asset: the 3 minutes ending with its most recent session start",
      params: AssetParamsSchema,
      response: { 200: VodStatsSchema, ...problemResponses(401, 404) },
    },
  }, async (request, reply) => sendJson(reply, vodStatsJson(await service.asset(authOf(request).owner, request.params.asset_id))));
}
