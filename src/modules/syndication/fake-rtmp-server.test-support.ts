import { randomBytes } from 'node:crypto';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';

/**
 * A fake RTMP ingest for tests and local demos: listens on 127.0.0.1 (port 0 by default) and
 * answers the RTMP handshake properly: after C0+C1 it sends S0 (version 3), S1 (its time,
 * zeros, random) and S2 (an echo of C1), then waits for C2. Other behaviours reproduce broken
 * ingests. With `tls` it is an RTMPS ingest.
 */
export type FakeRtmpBehaviour =
  /** The proper handshake. */
  | 'handshake'
  /** Answers with S0 version 6 instead of 3. */
  | 'wrong-version'
  /** Reads C0+C1 and never answers. */
  | 'silent'
  /** Closes the connection as soon as C0+C1 arrived. */
  | 'hang-up';

export interface FakeRtmpServerOptions {
  behaviour?: FakeRtmpBehaviour;
  tls?: { key: string; cert: string };
  port?: number;
}

export interface FakeRtmpServer {
  readonly port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Resolves once `count` clients have sent C0+C1. */
  clientHellos(count?: number): Promise<void>;
  /** Resolves once `count` handshakes were completed by a C2 that echoes S1. */
  handshakes(count?: number): Promise<void>;
  close(): Promise<void>;
}

const SIG = 1536;

export async function startFakeRtmpServer(options: FakeRtmpServerOptions = {}): Promise<FakeRtmpServer> {
  const behaviour = options.behaviour ?? 'handshake';
  const sockets = new Set<Socket>();
  let connections = 0;
  const counters = { hellos: 0, handshakes: 0 };
  const waiters: { counter: keyof typeof counters; count: number; resolve: () => void }[] = [];
  const bump = (counter: keyof typeof counters) => {
    counters[counter] += 1;
    for (const w of [...waiters]) {
      if (w.counter === counter && counters[counter] >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const waitFor = (counter: keyof typeof counters, count: number) =>
    counters[counter] >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ counter, count, resolve }));

  const onConnection = (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let received = Buffer.alloc(0);
    let s1: Buffer | undefined;
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (!s1 && received.length >= 1 + SIG) {
        bump('hellos');
        const c1 = received.subarray(1, 1 + SIG);
        received = received.subarray(1 + SIG);
        if (behaviour === 'silent') return;
        if (behaviour === 'hang-up') return void socket.destroy();
        s1 = Buffer.concat([Buffer.alloc(8), randomBytes(SIG - 8)]);
        const s2 = Buffer.from(c1);
        s2.writeUInt32BE(1, 4);
        socket.write(Buffer.concat([Buffer.from([behaviour === 'wrong-version' ? 6 : 3]), s1, s2]));
      }
      if (s1 && received.length >= SIG) {
        const c2 = received.subarray(0, SIG);
        received = received.subarray(SIG);
        if (c2.subarray(8).equals(s1.subarray(8))) bump('handshakes');
        socket.end();
      }
    });
  };

  const server: Server = options.tls ? createTlsServer(options.tls, onConnection) : createTcpServer(onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    get connections() {
      return connections;
    },
    clientHellos: (count = 1) => waitFor('hellos', count),
    handshakes: (count = 1) => waitFor('handshakes', count),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
