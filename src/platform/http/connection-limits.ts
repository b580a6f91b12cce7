import { randomUUID } from 'node:crypto';
import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { App } from './types.js';
import type { Config } from '../config.js';
import { problemOf } from './problem.js';
import { answerAndClose, rawProblemAnswer } from './raw-errors.js';

export type ConnectionSettings = Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'idleTimeoutMs' | 'maxConnectionsPerAddress'>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route streams its body (media uploads): a minimum rate applies instead of the request deadline. */
    streamedBody?: boolean;
  }
}

/**
 * Timeouts that close the connections of slow or silent clients: the request line and headers
 * must arrive within `headersTimeoutMs` (Node's own check, answered 408), the body within
 * `requestTimeoutMs` (enforceBodyDeadlines, below), and a connection with no traffic at all,
 * between requests or in the middle of one, is closed after `idleTimeoutMs`.
 */
export interface ConnectionTimeoutOptions {
  connectionTimeout: number;
  keepAliveTimeout: number;
  requestTimeout: number;
  http: ServerOptions;
}

export function connectionTimeouts(settings: ConnectionSettings): ConnectionTimeoutOptions {
  return {
    connectionTimeout: settings.idleTimeoutMs,
    keepAliveTimeout: settings.idleTimeoutMs,
    // Node's whole-request timeout cannot be lifted for one route (a 4 GiB upload): the body
    // deadline is kept by enforceBodyDeadlines instead.
    requestTimeout: 0,
    http: {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: 0,
      // Node looks for expired headers only this often (30 s by default, longer than the timeout).
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(settings.headersTimeoutMs / 4))),
    },
  };
}

/**
 * The body deadline: a request that carries a body must have received all of it
 * `requestTimeoutMs` after its headers, or it is answered 408 `request_timeout` and its connection
 * closed (even when a response was already sent, e.g. a 401 before the body arrived). Routes that
 * stream their body (`config.streamedBody`) may take longer, as long as the body keeps averaging
 * at least `streamedBodyMinRate` bytes per second. Bodiless requests cost nothing here.
 */
export function enforceBodyDeadlines(app: App, settings: Pick<Config, 'requestTimeoutMs' | 'streamedBodyMinRate'>): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const raw = request.raw;
    const length = raw.headers['content-length'];
    if (raw.complete || (raw.headers['transfer-encoding'] === undefined && (length === undefined || length === '0'))) return done();
    const socket = raw.socket;
    const started = Date.now();
    const bytesAtStart = socket.bytesRead;
    const streamed = request.routeOptions.config.streamedBody === true;
    let timer: NodeJS.Timeout | undefined;
    const check = () => {
      if (raw.complete || socket.destroyed) return;
      const seconds = (Date.now() - started) / 1000;
      if (streamed && (socket.bytesRead - bytesAtStart) / seconds >= settings.streamedBodyMinRate) {
        timer = setTimeout(check, 1000).unref();
        return;
      }
      const problem = problemOf('request_timeout', 'The request body did not arrive in time', request.id);
      request.log.debug({ code: problem.code, streamed }, 'connection cut: request body too slow');
      answerAndClose(socket, rawProblemAnswer(problem));
    };
    timer = setTimeout(check, settings.requestTimeoutMs).unref();
    // Ends the watch when the body is in (or the connection went): a keep-alive socket carries
    // many requests, so its close listener must go with the request, not pile up on the socket.
    const stop = () => {
      clearTimeout(timer);
      socket.off('close', stop);
    };
    raw.once('end', stop);
    socket.once('close', stop);
    done();
  });
}

/**
 * At most `max` open connections per client address (0: no cap): one address cannot hold every
 * socket the process may open. A connection beyond the cap is answered 429
 * `too_many_connections` and closed at once. Returns how many were refused, for metrics.
 */
export function limitConnectionsPerAddress(server: Server, max: number, log: FastifyBaseLogger): { refused: () => number } {
  let refused = 0;
  if (max <= 0) return { refused: () => refused };
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      refused++;
      const problem = problemOf('too_many_connections', `This address already has ${max} open connections; close some or retry later`, randomUUID());
      // Debug, not warn: a flood would flood the log too; the metric counts them.
      log.debug({ remoteAddress: address, max, request_id: problem.request_id }, 'connection refused: too many from one address');
      answerAndClose(socket, rawProblemAnswer(problem, { 'Retry-After': '1' }));
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
  return { refused: () => refused };
}
