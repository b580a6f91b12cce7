import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import { signV4 } from '../platform/auth/v4-signature.js';
import type { Transport, TransportResponse } from './transport.js';
import { fetchTransport } from './transport.js';

export interface ClientOptions {
  /** Where the API is, e.g. `http://127.0.0.1:8080` (without `/api/v4`); or give a transport. */
  baseUrl?: string;
  transport?: Transport;
  owner: string;
  apiKey: string;
  /** Unix milliseconds now (tests pass a fake clock's). */
  now?: () => number;
}

/** A problem+json answer, thrown by the client for every non-2xx status. */
export class PlaylineApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly body: unknown,
  ) {
    super(`${status} ${code}: ${detail}`);
    this.name = 'PlaylineApiError';
  }
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  /** JSON-encoded unless a string, Buffer or stream (sent as read) with its own contentType. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  /** Aborts the request (and a streamed body) at once. */
  signal?: AbortSignal;
}

/**
 * Signs requests the way the platform's v4 helpers do: msg and sig appended to the query
 * string, the operation's data as a JSON body. Module APIs hang off this core.
 */
export class ClientCore {
  private readonly transport: Transport;
  private readonly now: () => number;

  constructor(readonly options: ClientOptions) {
    if (!options.transport && !options.baseUrl) throw new Error('PlaylineClient needs a baseUrl or a transport');
    this.transport = options.transport ?? fetchTransport(options.baseUrl as string);
    this.now = options.now ?? Date.now;
  }

  /** `path?...&msg=..&sig=..`, freshly signed (valid for the server's timestamp tolerance). */
  signedPath(path: string, query: RequestOptions['query'] = {}): string {
    const { msg, sig } = signV4(this.options.owner, this.options.apiKey, Math.floor(this.now() / 1000));
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.append(key, String(value));
    params.append('msg', msg);
    params.append('sig', sig);
    return `${path}?${params.toString()}`;
  }

  /** Sends a signed request; returns the raw response whatever its status. */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<TransportResponse> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    let body: string | Buffer | Readable | undefined;
    if (options.body !== undefined) {
      const raw = typeof options.body === 'string' || Buffer.isBuffer(options.body) || options.body instanceof Readable;
      body = raw ? (options.body as string | Buffer | Readable) : JSON.stringify(options.body);
      headers['content-type'] = options.contentType ?? 'application/json';
    }
    return this.transport({ method, url: this.signedPath(path, options.query), headers, ...(body !== undefined ? { body } : {}), ...(options.signal ? { signal: options.signal } : {}) });
  }

  /** Sends a signed request and parses the JSON answer; throws PlaylineApiError on non-2xx. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    const parsed: unknown = response.body.length > 0 ? safeJson(response.body) : undefined;
    if (response.status < 200 || response.status >= 300) {
      const problem = (parsed ?? {}) as { code?: string; detail?: string };
      // Not every refusal is problem+json (a proxy's, or Node's own 431 for a request line too long): then the status says it.
      const detail = problem.detail ?? (response.body.trim() !== '' ? response.body.slice(0, 200) : `the server answered ${response.status} ${STATUS_CODES[response.status] ?? ''}`.trim());
      throw new PlaylineApiError(response.status, problem.code ?? 'http_error', detail, parsed);
    }
    return parsed as T;
  }
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};
