import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got. */
export interface ReceivedCallback {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How a receiver answers (tests and the benchmark). */
export type ReceiverBehaviour =
  | { kind: 'status'; status: number }
  | { kind: 'redirect'; location: string }
  /** Accepts the request and never answers until the receiver is closed (or `hangLimitMs` passes). */
  | { kind: 'hang' }
  /** Destroys the socket as soon as the request arrives. */
  | { kind: 'close_socket' };

export interface LocalReceiver {
  url: string;
  port: number;
  received: ReceivedCallback[];
  /** Requests seen, including ones whose body is not kept once `keep` is exceeded. */
  count(): number;
  /** TCP connections accepted so far (shows keep-alive reuse). */
  connections(): number;
  /** Resolves when `n` requests have arrived. */
  waitFor(n: number): Promise<void>;
  setBehaviour(behaviour: ReceiverBehaviour): void;
  close(): Promise<void>;
}

export interface LocalReceiverOptions {
  /** Bodies kept in `received`; later ones are only counted. Default 1000. */
  keep?: number;
  /** A hanging request is answered 500 after this long, so a forgotten receiver still ends. Default 60 s. */
  hangLimitMs?: number;
}

/**
 * An HTTP receiver on 127.0.0.1 with an OS-chosen port, for callback tests and benchmarks.
 * It only ever listens on loopback.
 */
export const startLocalReceiver = async (
  initial: ReceiverBehaviour = { kind: 'status', status: 200 },
  options: LocalReceiverOptions = {},
): Promise<LocalReceiver> => {
  const keep = options.keep ?? 1000;
  const hangLimitMs = options.hangLimitMs ?? 60_000;
  let behaviour = initial;
  let seen = 0;
  const received: ReceivedCallback[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const hanging = new Set<ServerResponse>();

  const answer = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    seen += 1;
    if (received.length < keep) received.push({ path: req.url ?? '', headers: req.headers, body });
    for (const waiter of waiters.filter((w) => seen >= w.n)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    switch (behaviour.kind) {
      case 'status':
        res.writeHead(behaviour.status, { 'content-type': 'text/plain' }).end(behaviour.status === 200 ? '' : `status ${behaviour.status}`);
        return;
      case 'redirect':
        res.writeHead(302, { location: behaviour.location }).end();
        return;
      case 'close_socket':
        req.socket.destroy();
        return;
      case 'hang': {
        hanging.add(res);
        const limit = setTimeout(() => res.writeHead(500).end(), hangLimitMs);
        limit.unref();
        res.on('close', () => {
          clearTimeout(limit);
          hanging.delete(res);
        });
        return;
      }
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => answer(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    count: () => seen,
    connections: () => connections,
    waitFor: (n) => (seen >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    setBehaviour: (next) => {
      behaviour = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

/** A loopback port that nothing listens on (a server is opened, and closed before the port is used). */
export const closedLoopbackPort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};
