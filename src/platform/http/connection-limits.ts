import { randomUUID } from 'node:crypto';
import type { Server, ServerOptions } from 'node:http';
import net, { type Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { App } from './types.js';
import type { Config } from '../config.js';
import { PROBLEM_CONTENT_TYPE, problemOf } from './problem.js';
import type { Clock } from '../clock.js';
import { answerAndClose, rawProblemAnswer } from './raw-errors.js';
import { clientNetworkOf } from '../net/address-class.js';
import { connectionCapOf, readOpenFileLimit, type OpenFileLimit } from '../open-file-limit.js';

export type ConnectionSettings = Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'idleTimeoutMs'>;

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
 * closed (even when a response was already sent, e.g. a 401 before the body arrived: then nothing
 * more is written, the connection is only closed). Routes that stream their body
 * (`config.streamedBody`) may take longer, as long as the body keeps averaging at least
 * `streamedBodyMinRate` bytes per second. Bodiless requests cost nothing here.
 *
 * Time is the runtime's `Clock`, so a test drives the deadline instead of waiting for it. A request
 * made by `app.inject` has no connection (light-my-request's socket is an event emitter with no
 * `destroy` or `write`): its late body is answered 408 through the reply if nothing was sent yet,
 * and its request stream is ended; a real socket is never assumed.
 */
export function enforceBodyDeadlines(app: App, settings: Pick<Config, 'requestTimeoutMs' | 'streamedBodyMinRate'>, clock: Clock): void {
  app.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    const length = raw.headers['content-length'];
    if (raw.complete || (raw.headers['transfer-encoding'] === undefined && (length === undefined || length === '0'))) return done();
    const socket = raw.socket as Socket | undefined;
    const real = socket instanceof net.Socket;
    const started = clock.now();
    const bytesRead = () => (real ? socket.bytesRead : 0);
    const bytesAtStart = bytesRead();
    const streamed = request.routeOptions.config.streamedBody === true;
    let cancel: (() => void) | undefined;
    let over = false;
    const stop = () => {
      over = true;
      cancel?.();
      socket?.off('close', stop);
    };
    const check = () => {
      if (over || raw.complete || (real && socket.destroyed)) return;
      const seconds = (clock.now() - started) / 1000;
      if (streamed && seconds > 0 && (bytesRead() - bytesAtStart) / seconds >= settings.streamedBodyMinRate) {
        cancel = clock.setTimer(check, 1000);
        return;
      }
      stop();
      const problem = problemOf('request_timeout', 'The request body did not arrive in time', request.id);
      request.log.debug({ code: problem.code, streamed }, 'connection cut: request body too slow');
      if (real) return answerAndClose(socket, rawProblemAnswer(problem));
      if (!reply.sent) void reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).header('connection', 'close').send(problem);
      raw.destroy();
    };
    cancel = clock.setTimer(check, settings.requestTimeoutMs);
    // Ends the watch when the body is in (or the connection went): a keep-alive socket carries
    // many requests, so its close listener must go with the request, not pile up on the socket.
    raw.once('end', stop);
    socket?.once('close', stop);
    done();
  });
}

/** `maxConnections` is unset unless configured (Config types its optional settings as always set). */
export type ConnectionCapSettings = Pick<Config, 'maxConnectionsPerAddress' | 'fdReserve'> & { maxConnections?: number | undefined };

export interface ConnectionCounts {
  /** Connections refused by the per-network cap (answered 429). */
  refused: () => number;
  /** Connections closed unanswered at the instance cap. */
  dropped: () => number;
  /** The instance cap in force. */
  cap: number;
}

/** The caps in force, as `connectionCaps` settled them at start. */
export interface ConnectionCaps {
  /** Open connections the instance accepts at once. */
  cap: number;
  /** Open connections one client network may hold (0: no cap). */
  perNetwork: number;
}

/** One client network may hold at most this share of the instance cap. */
const NETWORK_SHARE = 4;
/**
 * 1/8 of the instance cap is kept for networks holding fewer than 1/8 of the per-network cap
 * (at least one slot, for networks holding none).
 */
const RESERVED_SHARE = 8;

/**
 * The caps, settled once at start from the settings and the open-file limit read now, and logged:
 * the instance cap is the setting, or what the open-file limit allows when the setting is unset
 * or asks for more (lowered, with a warning: a host with a lower limit still serves); the
 * per-network cap is at most a quarter of it (lowered, with a warning), so one client network
 * never takes every connection and at least four share an instance. 0 (no per-network cap, the
 * setting behind a proxy) stays 0.
 */
export function connectionCaps(settings: ConnectionCapSettings, log: FastifyBaseLogger, readLimit: () => OpenFileLimit = readOpenFileLimit): ConnectionCaps {
  const { limit, source } = readLimit();
  const { cap, ceiling, clamped } = connectionCapOf({ limit, reserve: settings.fdReserve, setting: settings.maxConnections });
  const asked = settings.maxConnectionsPerAddress;
  const perNetwork = asked === 0 ? 0 : Math.min(asked, Math.max(1, Math.floor(cap / NETWORK_SHARE)));
  const context = { maxConnections: cap, maxConnectionsPerNetwork: perNetwork, openFileLimit: limit, openFileLimitSource: source, fdReserve: settings.fdReserve };
  if (clamped) {
    log.warn(context, `PLAYLINE_MAX_CONNECTIONS (--max-connections) is ${String(settings.maxConnections)}, more than the open-file limit allows (${limit} descriptors, ${settings.fdReserve} reserved by PLAYLINE_FD_RESERVE, two per connection): lowered to ${ceiling}; raise the limit (ulimit -n, LimitNOFILE) to accept more`);
  }
  if (perNetwork < asked) {
    log.warn(context, `PLAYLINE_MAX_CONNECTIONS_PER_ADDRESS (--max-connections-per-address) is ${asked}, more than a quarter of the ${cap} connections this instance accepts: lowered to ${perNetwork}, so one client network cannot take them all; raise the open-file limit (ulimit -n, LimitNOFILE) to accept more`);
  }
  if (!clamped && perNetwork === asked) log.info(context, 'connection caps');
  return { cap, perNetwork };
}

/**
 * Two caps on the server's open connections. Instance-wide: at most `cap` (Node's
 * `maxConnections`: a connection past it is closed as soon as it is accepted, before any
 * JavaScript object is made for it or a byte is read, so a flood holds no descriptor beyond the
 * cap; `drop` counts them). Per client network: at most `perNetwork` (0: none)
 * from the addresses of one IPv4 /24 or IPv6 /64 (the prefixes are settings), so one host or one
 * customer line with many addresses cannot hold them all either; one past it is answered 429
 * `too_many_connections` and closed; so is one from a network that already holds connections once
 * the instance is within its reserve (the last eighth), kept for networks holding (almost) none. No slot is kept for health checks: at the instance cap
 * `/healthz` is refused like everything else, which a load balancer should see.
 */
export function limitConnections(server: Server, settings: Pick<Config, 'connectionPrefixIpv4' | 'connectionPrefixIpv6'> & ConnectionCaps, log: FastifyBaseLogger): ConnectionCounts {
  let refused = 0;
  let dropped = 0;
  server.maxConnections = settings.cap;
  server.on('drop', () => {
    // No log line: a flood would flood the log too; the metric counts them.
    dropped++;
  });
  const counts = { refused: () => refused, dropped: () => dropped, cap: settings.cap };
  const max = settings.perNetwork;
  if (max <= 0) return counts;
  const prefixes = { ipv4Prefix: settings.connectionPrefixIpv4, ipv6Prefix: settings.connectionPrefixIpv6 };
  const open = new Map<string, number>();
  // The last slots of the instance are kept for networks that hold (almost) nothing yet: five
  // networks at their cap (issue 35: 5 x 70 idle connections) no longer fill the instance, so a
  // normal client is answered instead of dropped until the others' header timeout.
  const reserved = Math.max(1, Math.floor(settings.cap / RESERVED_SHARE));
  const light = Math.max(1, Math.floor(max / RESERVED_SHARE));
  let total = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const network = clientNetworkOf(address, prefixes);
    const held = open.get(network) ?? 0;
    const count = held + 1;
    const intoReserve = total >= settings.cap - reserved && held >= light;
    if (count > max || intoReserve) {
      refused++;
      const why = count > max
        ? `This client network (${network}) already has ${max} open connections; close some or retry later`
        : `This server is nearly full and keeps its last connections for other clients; this client network (${network}) already has ${held} open: close some or retry later`;
      const problem = problemOf('too_many_connections', why, randomUUID());
      // Debug, not warn: a flood would flood the log too; the metric counts them.
      log.debug({ remoteAddress: address, network, max, held, request_id: problem.request_id }, 'connection refused: too many from one client network');
      answerAndClose(socket, rawProblemAnswer(problem, { 'Retry-After': '1' }));
      return;
    }
    open.set(network, count);
    total++;
    socket.once('close', () => {
      total--;
      const left = (open.get(network) ?? 1) - 1;
      if (left <= 0) open.delete(network);
      else open.set(network, left);
    });
  });
  return counts;
}
