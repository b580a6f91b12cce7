import { Readable } from 'node:stream';

/** One HTTP exchange, whatever carries it (fetch over the network, or Fastify's inject in tests). */
export interface TransportRequest {
  method: string;
  /** Path with query string, e.g. `/api/v4/workspace?msg=..&sig=..`. */
  url: string;
  headers: Record<string, string>;
  /** A stream is sent as it is read (uploads), never buffered whole. */
  body?: string | Buffer | Readable;
}

export interface TransportResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

export const fetchTransport = (baseUrl: string): Transport => {
  const base = baseUrl.replace(/\/+$/, '');
  return async (request) => {
    const body = request.body instanceof Readable ? { body: Readable.toWeb(request.body) as ReadableStream, duplex: 'half' as const } : request.body !== undefined ? { body: request.body } : {};
    const response = await fetch(`${base}${request.url}`, { method: request.method, headers: request.headers, ...body, redirect: 'manual' });
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
