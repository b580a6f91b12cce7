import type { FastifyRequest, FastifySchemaValidationError } from 'fastify';
import type { FieldViolation } from '../../platform/errors.js';
import { authOf } from '../../platform/http/auth-hook.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import {
  SECRET_MASK,
  SyndicationTarget,
  TargetCreateBody,
  TargetDeleted,
  TargetIdParams,
  TargetPatchBody,
  TargetTestBody,
  TargetTestResult,
  collectionOf,
} from './syndication.schema.js';
import type { TargetService } from './target.service.js';
import { collection, targetDeletedView, targetView } from './syndication.view.js';

const tags = ['syndication'];

/**
 * What request-schema validation found, as plain violations. Target bodies are validated with
 * `attachValidation` so that the schema's first error and every rule violation are reported
 * together, as the one validator promises.
 */
function schemaViolations(request: FastifyRequest): FieldViolation[] {
  const validation = (request.validationError?.validation ?? []) as FastifySchemaValidationError[];
  return validation.map((v) => {
    const missing = typeof v.params.missingProperty === 'string' ? `/${v.params.missingProperty}` : '';
    return { path: `${v.instancePath}${missing}` || '/', message: v.message ?? 'is invalid' };
  });
}

/** `/syndication-target` CRUD and the connection test. */
export async function targetRoutes(api: App, deps: { targets: TargetService }): Promise<void> {
  const { targets } = deps;

  api.post('/syndication-target', {
    config: { auth: 'api' },
    attachValidation: true,
    schema: {
      tags,
      summary: 'Create a publishing target (every rule violation reported at once, with its JSON path)',
      description:
        "The rules of DESIGN §5 per platform and protocol. A platform's requirements apply whatever protocol was sent " +
        '(Pluto TV over rtmp is told the protocol and every missing zixi key at once). Custom rtmp/rtmps streams need a ' +
        'host and at least one path segment (rtmp://host[:port]/<path>[/<key>]).',
      body: TargetCreateBody,
      response: { 201: SyndicationTarget, ...problemResponses(400, 401) },
    },
  }, async (request, reply) => {
    const created = await targets.create(authOf(request).owner, request.body, schemaViolations(request));
    reply.code(201);
    return targetView(created);
  });

  api.get('/syndication-target', {
    config: { auth: 'api' },
    schema: { tags, summary: 'List the publishing targets of your workspace', response: { 200: collectionOf(SyndicationTarget, 'Publishing targets'), ...problemResponses(401) } },
  }, async (request) => collection('/syndication-target', (await targets.list(authOf(request).owner)).map(targetView)));

  api.get('/syndication-target/:id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'A publishing target (secrets masked)', params: TargetIdParams, response: { 200: SyndicationTarget, ...problemResponses(401, 404) } },
  }, async (request) => targetView(await targets.get(authOf(request).owner, request.params.id)));

  api.patch('/syndication-target/:id', {
    config: { auth: 'api' },
    attachValidation: true,
    schema: {
      tags,
      summary: 'Update a publishing target (platform and target_protocol required: they state its kind)',
      description: [
        'platform and target_protocol are required and state the kind of the target.',
        'Same kind: the fields given replace the stored ones, platform_config is merged key by key and null removes a key.',
        'Another kind: the same, over what of the stored target belongs to the new kind; stored fields that do not belong',
        '(a zixi password when moving to TikTok, a stream URL when moving to Pluto TV) are dropped, not reported.',
        `A secret sent back as "${SECRET_MASK}" keeps the stored one. The result is validated as a whole and every violation`,
        'is reported at once with its JSON path; only fields the request carries can be named as not belonging.',
      ].join(' '),
      params: TargetIdParams,
      body: TargetPatchBody,
      response: { 200: SyndicationTarget, ...problemResponses(400, 401, 404) },
    },
  }, async (request) => targetView(await targets.update(authOf(request).owner, request.params.id, request.body, schemaViolations(request))));

  api.delete('/syndication-target/:id', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Delete a publishing target (409 while a schedule using it is active)',
      params: TargetIdParams,
      response: { 200: TargetDeleted, ...problemResponses(401, 404, 409) },
    },
  }, async (request) => {
    await targets.remove(authOf(request).owner, request.params.id);
    return targetDeletedView(request.params.id);
  });

  api.patch('/syndication-target-test/:id', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Test the connection to a target (RTMP handshake for rtmp/rtmps, HTTP for hls-push)',
      params: TargetIdParams,
      body: TargetTestBody,
      response: { 200: TargetTestResult, ...problemResponses(400, 401, 404) },
    },
  }, async (request) => {
    const { id } = request.params;
    const result = await targets.test(authOf(request).owner, id);
    return {
      '@id': `/api/v4/syndication-target-test/${id}`,
      '@type': 'SyndicationTargetTest' as const,
      test: request.body.test,
      ...result,
    };
  });
}
