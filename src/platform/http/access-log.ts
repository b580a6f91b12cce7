import type { Bindings, ChildLoggerOptions } from 'pino';
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import { lineSinkOf, loggedPath, type Logger } from '../logger.js';
import type { App } from './types.js';

/** Probes and scrapes: answered, never logged (a load balancer asks every second). */
const UNLOGGED_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

const INFO = 30;

/**
 * One compact access line per request, at `info`, written when the response is finished:
 * `{"level":30,"time":…,"pid":…,"hostname":…,"reqId":…,"method":"GET","url":"/path","status":200,"ms":0.41,"msg":"request"}`
 * (plus the root's own bindings, e.g. the cluster instance). The url is the path only: the query
 * holds the signed msg and sig and playback tokens, which stay out of logs, and so does the token
 * of an `hls` slicer's ingest path (see loggedPath).
 *
 * The line is built as a string and handed to the root logger's destination: its fields are
 * fixed and hold no secret, so pino's redaction and object serialization (about 4 µs a line
 * here, more than the whole single-asset GET handler) buy nothing. The destination is pino's
 * asynchronous one in production (see createLogger) and a test's capture in tests.
 */
export function registerAccessLog(app: App, log: Logger): void {
  const sink = lineSinkOf(log);
  // A logger silent from the start stays so (Fastify got no logger then: see buildApp).
  if (!sink || log.level === 'silent') return;
  const { base } = sink;
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url;
    // The level is read per request: a level changed at run time (to warn) silences the line.
    if (log.levelVal <= INFO && (route === undefined || !UNLOGGED_ROUTES.has(route))) {
      const path = loggedPath(request.raw.url ?? '');
      sink.write(
        `{"level":${INFO},"time":${Date.now()}${base},"reqId":${JSON.stringify(request.id)},"method":${JSON.stringify(request.method)},"url":${JSON.stringify(path)},"status":${reply.statusCode},"ms":${Math.round(reply.elapsedTime * 1000) / 1000},"msg":"request"}\n`,
      );
    }
    done();
  });
}

/**
 * Fastify's request lines without "incoming request" and "request completed" (the access line
 * replaces both); a response that failed mid-way and Fastify's other error lines stay.
 */
export class AccessLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) super.requestCompleted(error, request, reply);
  }
}

/**
 * Fastify's per-request child logger, made on first use: most requests log nothing but their
 * access line, and `logger.child()` (bindings serialized, a new logger object) costs about 1 µs a
 * request. A request that does log (an error, a refusal) gets the same child as before.
 */
export function lazyRequestLogger(this: unknown, parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Forwards every call to the child made on first use. Methods live on the prototype: nothing is allocated per request but the object. */
class LazyChildLogger {
  #made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get made(): FastifyBaseLogger {
    this.#made ??= this.parent.child(this.bindings, this.options);
    return this.#made;
  }

  private forward(level: Level, args: unknown[]): void {
    const made = this.made;
    (made[level] as (...a: unknown[]) => void).apply(made, args);
  }

  get level(): string {
    return this.#made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.made.level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.made.child(bindings, options);
  }

  fatal(...args: unknown[]): void {
    this.forward('fatal', args);
  }
  error(...args: unknown[]): void {
    this.forward('error', args);
  }
  warn(...args: unknown[]): void {
    this.forward('warn', args);
  }
  info(...args: unknown[]): void {
    this.forward('info', args);
  }
  debug(...args: unknown[]): void {
    this.forward('debug', args);
  }
  trace(...args: unknown[]): void {
    this.forward('trace', args);
  }
  silent(...args: unknown[]): void {
    this.forward('silent', args);
  }
}
