import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Clock } from '../../platform/clock.js';
import type { Destination, Outbound } from '../../platform/net/outbound.js';

/**
 * The client half of the RTMP handshake (the "simple" handshake every ingest accepts):
 * send C0 (version 3) + C1 (time, zeros, 1528 random bytes), read S0 + S1 + S2, send C2
 * (the echo of S1), and hang up. Over TLS for rtmps. Never throws: the outcome is a value.
 */
export type HandshakeFailure = 'refused' | 'timeout' | 'bad_handshake' | 'tls_error' | 'unreachable' | 'reset';

export type HandshakeResult =
  | { ok: true; detail: string }
  | { ok: false; reason: HandshakeFailure; detail: string };

export interface HandshakeTarget {
  tls: boolean;
  /** Where to connect: admitted by the outbound layer, which pins the address (TLS checks the host name). */
  destination: Destination;
  /** Extra trust roots for rtmps (tests use a self-signed certificate). */
  ca?: string;
}

const SIG = 1536;
const RTMP_VERSION = 3;
const NETWORK_FAILURES: Record<string, HandshakeFailure> = {
  ECONNREFUSED: 'refused',
  ETIMEDOUT: 'timeout',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  EADDRNOTAVAIL: 'unreachable',
  ENOTFOUND: 'unreachable',
  EAI_AGAIN: 'unreachable',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
};

export function rtmpHandshake(target: HandshakeTarget, outbound: Outbound, clock: Clock, timeoutMs: number): Promise<HandshakeResult> {
  return new Promise((resolve) => {
    const c1 = Buffer.concat([Buffer.alloc(8), randomBytes(SIG - 8)]);
    c1.writeUInt32BE(Math.floor(clock.now()) % 0x1_0000_0000, 0);
    let secured = !target.tls;
    let received = Buffer.alloc(0);
    let settled = false;

    const finish = (result: HandshakeResult) => {
      if (settled) return;
      settled = true;
      cancelTimer();
      if (result.ok) socket.end();
      else socket.destroy();
      resolve(result);
    };
    const cancelTimer = clock.setTimer(
      () => finish({ ok: false, reason: 'timeout', detail: `no complete handshake within ${timeoutMs} ms` }),
      timeoutMs,
    );

    const start = () => socket.write(Buffer.concat([Buffer.from([RTMP_VERSION]), c1]));
    const socket: Socket = outbound.connect(target.destination, target.tls ? (target.ca ? { ca: target.ca } : {}) : false);
    socket.once(target.tls ? 'secureConnect' : 'connect', () => {
      secured = true;
      start();
    });

    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const version = received[0];
      if (version !== undefined && version !== RTMP_VERSION) {
        return finish({ ok: false, reason: 'bad_handshake', detail: `server answered RTMP version ${version}, expected ${RTMP_VERSION}` });
      }
      if (received.length < 1 + 2 * SIG) return;
      const s1 = received.subarray(1, 1 + SIG);
      const s2 = received.subarray(1 + SIG, 1 + 2 * SIG);
      // Ingests that answer a simple C1 with a digest-style S2 exist and work: accept, but say so.
      const echoed = s2.subarray(8).equals(c1.subarray(8));
      socket.write(s1, () => finish({ ok: true, detail: echoed ? 'RTMP handshake completed' : 'RTMP handshake completed (S2 does not echo C1)' }));
    });
    socket.on('end', () => finish({ ok: false, reason: 'bad_handshake', detail: 'server closed the connection during the handshake' }));
    socket.on('close', () => finish({ ok: false, reason: 'bad_handshake', detail: 'connection closed during the handshake' }));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const network = error.code ? NETWORK_FAILURES[error.code] : undefined;
      if (!secured && network !== 'refused' && network !== 'unreachable' && network !== 'timeout') {
        return finish({ ok: false, reason: 'tls_error', detail: `TLS handshake failed (${error.code ?? 'error'})` });
      }
      finish({ ok: false, reason: network ?? 'bad_handshake', detail: `connection failed (${error.code ?? 'error'})` });
    });
  });
}
