import { randomUUID } from 'node:crypto';
import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import { problemOf } from './problem.js';
import { answerAndClose, rawProblemAnswer } from './raw-errors.js';

export type ConnectionSettings = Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'idleTimeoutMs' | 'maxConnectionsPerAddress'>;

/**
 * Timeouts that close the connections of slow or silent clients: the request line and headers
 * must arrive within `headersTimeoutMs`, the whole request (a body trickled a byte at a time
 * included) within `requestTimeoutMs` (both answered 408), and a connection with no traffic at
 * all, between requests or in the middle of one, is closed after `idleTimeoutMs`.
 */
export interface ConnectionTimeoutOptions {
  connectionTimeout: number;
  keepAliveTimeout: number;
  requestTimeout: number;
  http: ServerOptions;
}

export function connectionTimeouts(settings: ConnectionSettings): ConnectionTimeoutOptions {
  const shortest = Math.min(settings.headersTimeoutMs, settings.requestTimeoutMs);
  return {
    connectionTimeout: settings.idleTimeoutMs,
    keepAliveTimeout: settings.idleTimeoutMs,
    requestTimeout: settings.requestTimeoutMs,
    http: {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      // Node looks for expired requests only this often (30 s by default, longer than the timeouts).
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(shortest / 4))),
    },
  };
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
