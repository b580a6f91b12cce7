import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Destination, Outbound } from '../../platform/net/outbound.js';

/** Where the relay really writes: an http(s) directory URL, possibly with credentials in it. */
export interface HttpPushDestination {
  /** Ends in `/`; `user:password@` in it becomes Basic authentication. */
  baseUrl: string;
  /** The base URL's host, admitted by the outbound layer (every upload is pinned to its address). */
  to: Destination;
  /** Extra trust roots for https (tests). */
  ca?: string;
}

export interface HttpPushRelay {
  /** The directory ffmpeg writes to: loopback, a random path, no secret. */
  readonly localBase: string;
  readonly lastFailure: string | undefined;
  /** Files the destination accepted (2xx) so far. */
  readonly accepted: number;
  close(): Promise<void>;
}

const FORWARDED_HEADERS = ['content-type', 'content-length', 'transfer-encoding'];

/**
 * A loopback HTTP relay for HLS push: ffmpeg PUTs playlists and segments to
 * `http://127.0.0.1:<port>/<random>/<name>`, the relay sends each to `<baseUrl><name>` (Basic
 * authentication from the URL's credentials), streaming the body, and answers with the
 * destination's status. The destination URL, credentials included, never reaches ffmpeg's
 * command line. Requests under another path are refused.
 */
export async function startHttpPushRelay(destination: HttpPushDestination, outbound: Outbound, onFailure: (reason: string) => void = () => undefined): Promise<HttpPushRelay> {
  const token = randomBytes(12).toString('hex');
  const base = new URL(destination.baseUrl);
  const auth = base.username || base.password ? `Basic ${Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64')}` : undefined;
  base.username = '';
  base.password = '';
  let lastFailure: string | undefined;
  let accepted = 0;
  const fail = (res: ServerResponse, status: number, reason: string) => {
    lastFailure = reason;
    onFailure(reason);
    if (!res.headersSent) res.writeHead(status).end();
    else res.destroy();
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const prefix = `/${token}/`;
    const path = req.url ?? '';
    const name = path.startsWith(prefix) ? path.slice(prefix.length) : undefined;
    if (name === undefined || name === '' || name.includes('..') || !['PUT', 'POST', 'DELETE'].includes(req.method ?? '')) {
      req.resume();
      res.writeHead(404).end();
      return;
    }
    const target = new URL(name, base);
    const headers: Record<string, string> = {};
    for (const key of FORWARDED_HEADERS) {
      const value = req.headers[key];
      if (typeof value === 'string') headers[key] = value;
    }
    if (auth) headers.authorization = auth;
    const upstream = outbound.request(destination.to, target, {
      method: req.method,
      headers,
      ...(destination.ca ? { ca: destination.ca } : {}),
    });
    upstream.on('response', (answer) => {
      answer.resume();
      const status = answer.statusCode ?? 502;
      // A refused DELETE of an old segment harms nobody; a refused upload ends the attempt.
      if (status >= 400 && req.method !== 'DELETE') return fail(res, status, `the destination answered ${status} to the upload of ${name.split('?')[0] ?? ''}`);
      if (status < 300 && req.method !== 'DELETE') accepted += 1;
      res.writeHead(status).end();
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => fail(res, 502, `the destination could not be reached (${err.code ?? err.message})`));
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    localBase: `http://127.0.0.1:${port}/${token}/`,
    get lastFailure() {
      return lastFailure;
    },
    get accepted() {
      return accepted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
