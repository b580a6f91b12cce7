import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';

/** One HTTP exchange, whatever carries it (fetch over the network, or Fastify's inject in tests). */
export interface TransportRequest {
  method: string;
  /** Path with query string, e.g. `/api/v4/workspace?msg=..&sig=..`. */
  url: string;
  headers: Record<string, string>;
  /** A stream is sent as it is read (uploads), never buffered whole. */
  body?: string | Buffer | Readable;
  /** Aborts the exchange (an upload stops sending at once). */
  signal?: AbortSignal;
}

export interface TransportResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

/**
 * The request could not be completed: the connection failed or was closed before an answer came.
 * The message says how far it got; `cause` is the network error underneath.
 */
export class TransportError extends Error {
  constructor(
    message: string,
    /** Bytes of the request body sent before it ended (a streamed upload). */
    readonly sentBytes: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransportError';
  }
}

const headersOf = (raw: IncomingMessage['headers']): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) if (value !== undefined) headers[key] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
};

/** How long a streamed body waits for the server's `100 Continue` before it is sent anyway (a server or proxy that ignores Expect). */
const CONTINUE_WAIT_MS = 2_000;

/**
 * A streamed body (an upload) over node:http rather than fetch: a server may refuse the request
 * before reading the body (413 beyond its limit, 431 for a request line too long) and close the
 * connection; fetch then reports only "fetch failed". The body waits for the server's
 * `100 Continue` (Expect), so a refusal arrives before any of it is sent; an answer that comes
 * while it is sent is returned as it came, and a connection closed without one says after how
 * many bytes.
 */
const streamExchange = (url: URL, request: TransportRequest & { body: Readable }): Promise<TransportResponse> =>
  new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers = { ...request.headers, expect: '100-continue' };
    const req = send(url, { method: request.method, headers, ...(request.signal ? { signal: request.signal } : {}) });
    const body = request.body;
    let sent = 0;
    let answered = false;
    let sending = false;
    const startSending = () => {
      clearTimeout(noContinue);
      if (sending || answered) return;
      sending = true;
      body.on('data', (chunk: Buffer) => (sent += chunk.length));
      body.pipe(req);
    };
    const noContinue = setTimeout(startSending, CONTINUE_WAIT_MS);
    req.once('continue', startSending);
    const stopBody = () => {
      clearTimeout(noContinue);
      body.unpipe(req);
      body.destroy();
    };
    req.once('error', (err: Error) => {
      stopBody();
      if (answered) return;
      answered = true;
      const what = request.signal?.aborted === true ? 'the request was aborted' : `the connection to ${url.host} was closed`;
      reject(new TransportError(`${what} after ${sent} bytes of the body were sent, before the server answered`, sent, { cause: err }));
    });
    body.once('error', (err: Error) => {
      // The body itself failed (a file read error): that is the error to report.
      if (answered) return;
      answered = true;
      req.destroy();
      reject(err);
    });
    req.once('response', (res) => {
      answered = true;
      // The server answered: stop sending what it will not read.
      stopBody();
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('error', (err) => reject(new TransportError(`the answer from ${url.host} was cut off (${res.statusCode ?? 0})`, sent, { cause: err })));
      res.once('end', () => {
        // A request whose body was cut short holds its connection: close it.
        if (!req.writableFinished) req.destroy();
        resolve({ status: res.statusCode ?? 0, headers: headersOf(res.headers), body: Buffer.concat(chunks).toString('utf8') });
      });
    });
  });

export const fetchTransport = (baseUrl: string): Transport => {
  const base = baseUrl.replace(/\/+$/, '');
  return async (request) => {
    if (request.body instanceof Readable) return streamExchange(new URL(`${base}${request.url}`), { ...request, body: request.body });
    const body = request.body !== undefined ? { body: request.body } : {};
    const response = await fetch(`${base}${request.url}`, { method: request.method, headers: request.headers, ...body, redirect: 'manual', ...(request.signal ? { signal: request.signal } : {}) });
    const headers: Record<string, string> = {};
    response.headers.forEach((value, key) => {
      headers[key] = value;
    });
    return { status: response.status, headers, body: await response.text() };
  };
};

/** Anything with Fastify's `inject` (so the SDK drives an app in tests without a socket). */
export interface Injectable {
  inject(options: { method: string; url: string; headers: Record<string, string>; payload?: string | Buffer | Readable }): PromiseLike<{
    statusCode: number;
    headers: Record<string, string | string[] | number | undefined>;
    body: string;
  }>;
}

export const injectTransport = (app: Injectable): Transport => async (request) => {
  const response = await app.inject({
    method: request.method,
    url: request.url,
    headers: request.headers,
    ...(request.body !== undefined ? { payload: request.body } : {}),
  });
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(response.headers)) if (value !== undefined) headers[key] = String(value);
  return { status: response.statusCode, headers, body: response.body };
};
