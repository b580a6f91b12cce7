import swagger from '@fastify/swagger';
import type { App } from './types.js';
import { ProblemSchema } from './problem.js';

/**
 * The OpenAPI 3.1 document, generated from the TypeBox schemas that validate requests and
 * serialize responses. Register before any route.
 */
export async function registerOpenApi(app: App, version: string, extra: { webhooks?: Record<string, unknown> } = {}): Promise<void> {
  app.addSchema(ProblemSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Playline v4 API',
        version,
        description:
          'VOD playback statistics, publishing targets and schedules, managed slicer tasks and Error Reporting. ' +
          'Every /api/v4 route except this document is signed: msg = base64(zlib(JSON {"_owner","_timestamp"})), ' +
          'sig = hex HMAC-SHA256(API key, msg), both in the query string (or `Authorization: <msg> <sig>`). ' +
          'Other keys of the msg JSON are request parameters, exactly like query parameters and validated by the same schema ' +
          '(`{"_owner":…,"_timestamp":…,"top":10}` is `?top=10`; a list is a comma-separated list); a parameter given in both ' +
          'places with different values is 400 parameter_conflict. Every error answer is application/problem+json.',
      },
      components: {
        securitySchemes: {
          v4Msg: {
            type: 'apiKey',
            in: 'query',
            name: 'msg',
            description:
              'base64(zlib level 9(JSON {"_owner","_timestamp", ...request parameters})): keys other than _owner and _timestamp ' +
              'are request parameters, validated like query parameters; one given both ways must have one value',
          },
          v4Sig: { type: 'apiKey', in: 'query', name: 'sig', description: 'hex HMAC-SHA256 of msg keyed by the API key' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'PLAYLINE_ADMIN_TOKEN' },
        },
      },
      security: [{ v4Msg: [], v4Sig: [] }],
      // Relative: the origin this document was fetched from (behind a proxy or on another port alike), never a Host header echoed back.
      servers: [{ url: '/', description: 'The server this document is served by' }],
      // What subscribed endpoints receive (OpenAPI 3.1 webhooks): operational events.
      ...(extra.webhooks ? { webhooks: extra.webhooks } : {}),
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  app.get('/api/v4/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger());
}
