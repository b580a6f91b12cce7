import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../errors.js';
import { PROBLEM_CONTENT_TYPE, problemOf, toProblem, type Problem } from './problem.js';

/**
 * A whole HTTP/1.1 answer carrying a problem, for a socket that Fastify never turned into a
 * request (parse errors, timeouts, refused connections). The connection is closed after it.
 */
export function rawProblemAnswer(problem: Problem, headers: Record<string, string> = {}): string {
  const body = JSON.stringify(problem);
  const lines = [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${problem.request_id}`,
    'Connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** Writes the answer unless a response has already begun on the socket, then closes it. */
export function answerAndClose(socket: Socket, answer: string): void {
  // Node's own handler makes the same check: a response already on its way cannot be replaced.
  const pending = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !pending?.headersSent) socket.write(answer, () => socket.destroy());
  else socket.destroy();
}

/** Node's HTTP parser and timeout errors, by code; anything else it reports is a 400. */
const clientErrorCodes: Record<string, [ErrorCode, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'The request headers or body did not arrive in time'],
  HPE_HEADER_OVERFLOW: ['headers_too_large', 'The request line and headers are larger than this server accepts'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: ['payload_too_large', 'The chunk extensions of the body are too large'],
};

/**
 * Fastify's `clientErrorHandler`: errors on a raw connection (malformed HTTP, headers too large,
 * a request not received in time) answered as problem+json. No request exists yet, so the
 * request id is made here; the URL is never echoed.
 */
export function onClientError(log: FastifyBaseLogger): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const [code, detail] = clientErrorCodes[err.code ?? ''] ?? (['bad_request', 'The request is not valid HTTP/1.1'] as const);
    const problem = problemOf(code, detail, randomUUID());
    // Debug, not info: anyone can send these, as often as they like.
    log.debug({ code, request_id: problem.request_id, parser: err.code, remoteAddress: socket.remoteAddress }, 'connection refused: client error');
    answerAndClose(socket, rawProblemAnswer(problem));
  };
}

/**
 * Fastify's `frameworkErrors`: a URL the router cannot decode or a path segment longer than the
 * id limit, answered like every other error (the detail names neither the path nor its query,
 * which may hold a signed msg and sig).
 */
export function onFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const problem = toProblem(error, request.id);
  request.log.debug({ code: problem.code, status: problem.status }, 'request refused');
  void reply.code(problem.status).header('x-request-id', request.id).type(PROBLEM_CONTENT_TYPE).send(problem);
}
