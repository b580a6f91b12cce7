import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AuthContext, Authenticator, Verified } from '../auth/authenticator.js';
import { AppError } from '../errors.js';
import type { App } from './types.js';

/**
 * Who may call a route: `api` (an owner's API key), `ingest` (an API key or an ingest key),
 * `admin` (the admin token), `none` (public: health, metrics, the OpenAPI document).
 */
export type AuthPolicy = 'api' | 'ingest' | 'admin' | 'none';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthPolicy;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

const credentialsOf = (request: FastifyRequest): { msg?: string; sig?: string } => {
  const query = request.query as Record<string, unknown> | undefined;
  const msg = typeof query?.msg === 'string' ? query.msg : undefined;
  const sig = typeof query?.sig === 'string' ? query.sig : undefined;
  if (msg !== undefined || sig !== undefined) return { msg, sig };
  const header = request.headers.authorization;
  if (typeof header === 'string' && !header.startsWith('Bearer ')) {
    const [hMsg, hSig] = header.trim().split(/\s+/);
    return { msg: hMsg, sig: hSig };
  }
  return {};
};

const digest = (value: string) => createHash('sha256').update(value).digest();

export function registerAuth(app: App, authenticator: Authenticator, adminToken: string | undefined, closing: () => boolean = () => false): void {
  app.decorateRequest('auth', null);
  const adminDigest = adminToken ? digest(adminToken) : null;

  const check = (request: FastifyRequest, policy: AuthPolicy, verified: Verified): void => {
    if (verified.context.keyKind === 'ingest' && policy !== 'ingest') {
      throw new AppError('key_kind_not_allowed', 'An ingest key may only submit events');
    }
    request.auth = verified.context;
    if (verified.params !== undefined) addMsgParams(request, verified.params);
  };

  // One hook per request (it also echoes the request id), callback style so that the common
  // case (a pair verified moments ago) stays synchronous.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // Requests still arriving on open connections while the server drains go elsewhere.
    if (closing()) {
      reply.header('connection', 'close');
      return done(new AppError('service_unavailable', 'The server is shutting down; retry the request'));
    }
    // Unknown routes fall through to the 404 handler without asking for credentials.
    if (request.is404) return done();
    const policy = request.routeOptions.config.auth ?? 'api';
    if (policy === 'none') return done();
    try {
      if (policy === 'admin') {
        if (!adminDigest) throw new AppError('admin_api_disabled', 'Set PLAYLINE_ADMIN_TOKEN to enable the admin API');
        const header = request.headers.authorization ?? '';
        const given = header.startsWith('Bearer ') ? header.slice(7) : '';
        if (!timingSafeEqual(digest(given), adminDigest)) throw new AppError('invalid_admin_token', 'Send Authorization: Bearer <admin token>');
        return done();
      }
      const { msg, sig } = credentialsOf(request);
      const recalled = authenticator.recall(msg, sig);
      if (recalled) {
        check(request, policy, recalled);
        return done();
      }
      authenticator.authenticate(msg, sig).then(
        (auth) => {
          try {
            check(request, policy, auth);
            done();
          } catch (err) {
            done(err as Error);
          }
        },
        (err: Error) => done(err),
      );
    } catch (err) {
      done(err as Error);
    }
  });
}

/** A parameter name a query string could carry (and never `__proto__` or the like). */
const PARAM_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** A msg value in the text form a query string gives it: lists are comma-separated, as list parameters take them. */
const asQueryText = (name: string, value: unknown): string => {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) return value.join(',');
  throw new AppError('validation_failed', `Parameter ${name} in msg must be a string, a number, a boolean or a list of them`, {
    errors: [{ path: `/querystring/${name}`, message: 'must be a string, a number, a boolean or a list of them' }],
  });
};

/**
 * Request parameters passed inside msg (keys other than `_owner` and `_timestamp`, as the
 * platform's published helper sends them) join the query string before the route's schema
 * validates it, so both ways are one. A key given both ways must have one value.
 */
function addMsgParams(request: FastifyRequest, params: Readonly<Record<string, unknown>>): void {
  const query = request.query as Record<string, unknown>;
  for (const [name, value] of Object.entries(params)) {
    if (!PARAM_NAME.test(name) || name === 'msg' || name === 'sig') {
      throw new AppError('validation_failed', `msg holds ${JSON.stringify(name.slice(0, 64))}, which is not a request parameter`, {
        errors: [{ path: '/querystring/msg', message: `holds a key that is not a request parameter: ${JSON.stringify(name.slice(0, 64))}` }],
      });
    }
    const text = asQueryText(name, value);
    if (!Object.hasOwn(query, name)) {
      query[name] = text;
      continue;
    }
    const given = query[name];
    const givenText = Array.isArray(given) ? given.join(',') : String(given);
    if (givenText !== text) {
      throw new AppError('parameter_conflict', `${name} is ${JSON.stringify(givenText)} in the query string but ${JSON.stringify(text)} in msg`, {
        errors: [{ path: `/querystring/${name}`, message: 'differs between the query string and msg' }],
      });
    }
  }
}

/** The authenticated context of a signed route (present whenever the route's policy is api or ingest). */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new AppError('internal_error', 'Route reached without authentication');
  return request.auth;
}

/** An owner named by a query parameter or path must be the signer's own workspace. */
export function assertOwnWorkspace(request: FastifyRequest, owner: string): AuthContext {
  const auth = authOf(request);
  if (auth.owner !== owner) throw new AppError('forbidden_workspace', `This key belongs to workspace ${auth.owner}, not ${owner}`);
  return auth;
}
