import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Runtime } from './runtime.js';
import { registerAuth } from './platform/http/auth-hook.js';
import { registerHealth } from './platform/http/health.js';
import { registerMetrics } from './platform/http/metrics.js';
import { registerOpenApi } from './platform/http/openapi.js';
import { PROBLEM_CONTENT_TYPE, toProblem } from './platform/http/problem.js';
import { acceptEmptyJsonBodies, schemaController } from './platform/http/request-parsing.js';
import { onClientError, onFrameworkError } from './platform/http/raw-errors.js';
import { connectionTimeouts, enforceBodyDeadlines, connectionCaps, limitConnections } from './platform/http/connection-limits.js';
import { MAX_ID_LENGTH } from './platform/limits.js';
import { trustedProxiesOf } from './platform/config.js';
import { AccessLogController, lazyRequestLogger, registerAccessLog } from './platform/http/access-log.js';
import { recordRoutes } from './platform/http/route-table.js';
import { registerFrontDoor } from './platform/http/front-door.js';
import type { App } from './platform/http/types.js';
import { AppError } from './platform/errors.js';
import { dashboardRoutes } from './modules/dashboard/dashboard.routes.js';
import { clusterStatusRoutes } from './platform/cluster/cluster-status.routes.js';
import { operationalEventWebhooks } from './modules/webhooks/webhooks.openapi.js';
import { VERSION } from './platform/version.js';

export const API_PREFIX = '/api/v4';
export { VERSION };

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the whole HTTP API over a runtime. Never listens: the server entry or a test does. */
export async function buildApp(runtime: Runtime): Promise<App> {
  // The runtime's one logger: request lines get the same level, base fields and redaction as every
  // module's. Silent, there is nothing to write: no logger spares a child logger per request.
  // Fastify's two lines per request ("incoming request", "request completed") give way to one
  // compact access line (registerAccessLog); a request's child logger is made only if it logs.
  const loggerInstance: FastifyBaseLogger = runtime.log;
  const trustedProxies = trustedProxiesOf(runtime.config);
  const app = Fastify({
    ...(runtime.config.logLevel === 'silent' ? {} : { loggerInstance, logController: new AccessLogController(), childLoggerFactory: lazyRequestLogger }),
    // Path parameters are ids: one length limit for every id, the one ingest accepts.
    routerOptions: { ignoreDuplicateSlashes: true, ignoreTrailingSlash: true, maxParamLength: MAX_ID_LENGTH },
    genReqId: (req: IncomingMessage) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    // Behind a reverse proxy (the nginx front), the client is the one its X-Forwarded-For names.
    ...(trustedProxies.length > 0 ? { trustProxy: trustedProxies } : {}),
    // Fastify's own 503 while closing is plain JSON; the closing check in the auth hook answers instead.
    return503OnClosing: false,
    ...connectionTimeouts(runtime.config),
    schemaController,
    frameworkErrors: onFrameworkError,
    clientErrorHandler: function (this: { log: FastifyBaseLogger }, err: NodeJS.ErrnoException, socket: Socket) {
      onClientError(this.log)(err, socket);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // The API speaks JSON (and NDJSON where a module adds it); anything else is a 415.
  app.removeContentTypeParser('text/plain');
  acceptEmptyJsonBodies(app);
  const caps = connectionCaps(runtime.config, app.log);
  runtime.metrics.countConnections(limitConnections(app.server, { ...runtime.config, ...caps }, app.log));
  enforceBodyDeadlines(app, runtime.config);

  app.setErrorHandler((err, request, reply) => {
    const problem = toProblem(err, request.id);
    if (problem.code === 'storage_full') runtime.storageHealth.noteFailure(err);
    if (problem.code === 'quota_exceeded' || problem.code === 'storage_quota_exceeded') runtime.quotas.refused(String((problem as { quota?: unknown }).quota ?? 'other'));
    if (problem.status >= 500) request.log.error({ err }, 'request failed');
    // The access line has the status; the code is in the answer (debug shows it here too).
    else request.log.debug({ code: problem.code, status: problem.status }, 'request refused');
    void reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem);
  });
  app.setNotFoundHandler((request, reply) => {
    const problem = toProblem(new AppError('route_not_found', `No route ${request.method} ${request.url.split('?')[0]}`), request.id);
    void reply.code(404).type(PROBLEM_CONTENT_TYPE).send(problem);
  });

  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  recordRoutes(app);
  registerAccessLog(app, runtime.log);
  await registerOpenApi(app, VERSION, { webhooks: operationalEventWebhooks() });
  registerAuth(app, runtime.authenticator, runtime.config.adminToken, () => closing);
  registerMetrics(app, runtime.metrics);
  registerHealth(app, runtime.storage, runtime.storageHealth);

  // The whole API, one module at a time (each module's routes file lists its routes), then the
  // platform's own and the routes outside the API prefix (playback, media ingest, pull URLs).
  for (const module of runtime.modules) {
    const { apiRoutes } = module;
    if (apiRoutes) await app.register(async (api) => apiRoutes(api), { prefix: API_PREFIX });
  }
  await app.register(async (api) => clusterStatusRoutes(api, runtime), { prefix: API_PREFIX });
  for (const module of runtime.modules) {
    const { rootRoutes } = module;
    if (rootRoutes) await app.register(async (root) => rootRoutes(root));
  }
  await app.register(async (web) => dashboardRoutes(web));
  await registerFrontDoor(app);

  await app.ready();
  return app;
}
