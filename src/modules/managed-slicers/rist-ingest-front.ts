import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { systemClock, type Clock } from '../../platform/clock.js';
import { CHECKED_BYTES, checkPlaintext, decryptPrefix, readGreHeader, ristAesKey, type RistGreHeader } from './rist-packet.js';

/** Why datagrams of an address were dropped (told once per address and reason, see `onRefused`). */
export type RistRefusalReason =
  /** Not a RIST main-profile (GRE) datagram. */
  | 'not_rist'
  /** A RIST datagram without encryption (no GRE key/nonce): the sender has no secret. */
  | 'not_encrypted'
  /** Encrypted, but it does not decrypt to a RIST header under the slicer's secret. */
  | 'bad_key'
  /** The right key, while another sender holds the slicer. */
  | 'busy'
  /** More datagrams a second than `candidatePacketsPerSecond`, or no key derivation left this second. */
  | 'rate_limited';

export interface RistRefusal {
  reason: RistRefusalReason;
  detail: string;
  remoteAddress: string;
}

export interface RistIngestLimits {
  /** Proving datagrams in a row (each decrypts to a RIST header) before a sender is admitted. Default 3. */
  proofsToAdmit?: number;
  /** How long the admitted sender may send nothing that decrypts before another keyed sender may take over. Default 5 s. */
  idleMs?: number;
  /** Senders (address and port) tracked before admission; the least recent is forgotten. Default 256. */
  maxPeers?: number;
  /** Datagrams a second one address may send before it is admitted; the rest are dropped unread. Default 200. */
  candidatePacketsPerSecond?: number;
  /** AES keys derived a second (PBKDF2, ~1 ms each) for nonces not seen yet, over every sender. Default 20. */
  derivationsPerSecond?: number;
  /** Addresses whose refusal is told (`onRefused`) before the list starts over. Default 1024. */
  maxToldAddresses?: number;
}

export interface RistIngestFrontOptions {
  /** Interface and port encoders send to (the slicer's public RIST port); port 0 picks one. */
  host: string;
  port: number;
  /** The slicer's stream key: the RIST secret. */
  secret: string;
  clock?: Clock;
  limits?: RistIngestLimits;
  /** Told once per address and reason when datagrams are dropped (logs). */
  onRefused?(refusal: RistRefusal): void;
  /** Told when a sender is admitted (logs). */
  onAdmitted?(remoteAddress: string): void;
}

export interface RistIngestFront {
  readonly port: number;
  /** `address:port` of the admitted sender, if any. */
  readonly admitted: string | undefined;
  /** Datagrams received on the public port, forwarded to the listener, and dropped by reason. */
  readonly counts: { received: number; forwarded: number; dropped: Record<RistRefusalReason | 'no_listener', number> };
  /** Senders tracked before admission (at most `maxPeers`). */
  readonly tracked: number;
  /** The loopback port of ffmpeg's RIST listener the admitted sender's datagrams go to (undefined: none runs). */
  setTarget(port: number | undefined): void;
  close(): Promise<void>;
}

const DEFAULTS: Required<RistIngestLimits> = { proofsToAdmit: 3, idleMs: 5_000, maxPeers: 256, candidatePacketsPerSecond: 200, derivationsPerSecond: 20, maxToldAddresses: 1024 };
const MAX_HELD = 8;
const MAX_KEYS = 64;

interface Candidate {
  nonce: string;
  proofs: number;
  /** Proving datagrams kept until admission, so the listener sees the sender's first RTCP and data. */
  held: Buffer[];
  windowStart: number;
  inWindow: number;
}

interface Admitted {
  id: string;
  address: string;
  port: number;
  lastProofAt: number;
  upstream: Socket;
}

/**
 * The UDP front of a slicer's RIST port (issue 35): librist, run by ffmpeg on a loopback port,
 * drops a wrong secret but takes a sender with none. The front takes every datagram on the
 * public port and forwards to the listener only those of ONE admitted sender, one that proved it
 * holds the secret: its datagrams are encrypted (GRE key bit) and `proofsToAdmit` of them in a
 * row decrypt to a RIST header (rist-packet.ts). Plain, wrong-key and other senders are dropped,
 * so an outsider who sent first never holds the slicer; the admitted sender is replaced only
 * once it has sent nothing that decrypts for `idleMs`. The listener's answers (keep-alives,
 * retransmission requests) go back to the admitted sender from the public port. Each admitted
 * sender gets its own loopback socket, so the listener sees a new peer, never two in one flow.
 */
export async function startRistIngestFront(options: RistIngestFrontOptions): Promise<RistIngestFront> {
  const limits = { ...DEFAULTS, ...options.limits };
  const clock = options.clock ?? systemClock;
  const candidates = new Map<string, Candidate>();
  const keys = new Map<string, Buffer>();
  const told = new Set<string>();
  const counts: RistIngestFront['counts'] = { received: 0, forwarded: 0, dropped: { not_rist: 0, not_encrypted: 0, bad_key: 0, busy: 0, rate_limited: 0, no_listener: 0 } };
  let derivations = { second: 0, used: 0 };
  let admitted: Admitted | undefined;
  let target: number | undefined;
  let closed = false;

  const socket = createSocket({ type: options.host.includes(':') ? 'udp6' : 'udp4' });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind({ address: options.host, port: options.port, exclusive: true }, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  // A send that fails (the sender's port closed: ICMP) is not the front's failure.
  socket.on('error', () => undefined);

  const drop = (reason: RistRefusalReason, detail: string, from: RemoteInfo): void => {
    counts.dropped[reason]++;
    const key = `${from.address}|${reason}`;
    if (told.has(key)) return;
    if (told.size >= limits.maxToldAddresses) told.clear();
    told.add(key);
    options.onRefused?.({ reason, detail, remoteAddress: from.address });
  };

  /** The AES key of a nonce, derived at most `derivationsPerSecond` times a second for nonces not cached. */
  const keyOf = (header: RistGreHeader): Buffer | undefined => {
    const id = `${header.nonce.toString('hex')}/${header.keyBits}`;
    const cached = keys.get(id);
    if (cached) return cached;
    const second = Math.floor(clock.now() / 1000);
    if (derivations.second !== second) derivations = { second, used: 0 };
    if (derivations.used >= limits.derivationsPerSecond) return undefined;
    derivations.used++;
    const key = ristAesKey(options.secret, header.nonce, header.keyBits);
    if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value as string);
    keys.set(id, key);
    return key;
  };

  type Verdict = 'proof' | 'neutral' | RistRefusalReason;
  const verdictOf = (datagram: Buffer): { verdict: Verdict; header?: RistGreHeader } => {
    const header = readGreHeader(datagram);
    if (!header) return { verdict: 'not_rist' };
    if (!header.encrypted) return { verdict: 'not_encrypted', header };
    const key = keyOf(header);
    if (!key) return { verdict: 'rate_limited', header };
    const payloadLength = datagram.length - header.payloadOffset;
    const plain = decryptPrefix(key, header, datagram, CHECKED_BYTES);
    const verdict = checkPlaintext(header.protocol, plain, payloadLength);
    return { verdict: verdict === 'fails' ? 'bad_key' : verdict, header };
  };

  const forward = (from: Admitted, datagram: Buffer): void => {
    if (target === undefined) return void counts.dropped.no_listener++;
    counts.forwarded++;
    from.upstream.send(datagram, target, '127.0.0.1');
  };

  const admit = (id: string, from: RemoteInfo, held: Buffer[]): void => {
    admitted?.upstream.close();
    const upstream = createSocket('udp4');
    const next: Admitted = { id, address: from.address, port: from.port, lastProofAt: clock.now(), upstream };
    upstream.on('error', () => undefined);
    upstream.on('message', (answer, by) => {
      // Only the listener's own answers go back out, and only to the sender they are for.
      if (closed || admitted !== next || by.address !== '127.0.0.1' || by.port !== target) return;
      socket.send(answer, next.port, next.address);
    });
    upstream.bind(0, '127.0.0.1');
    admitted = next;
    candidates.delete(id);
    options.onAdmitted?.(from.address);
    for (const datagram of held) forward(next, datagram);
  };

  const fromCandidate = (id: string, datagram: Buffer, from: RemoteInfo): void => {
    const now = clock.now();
    let candidate = candidates.get(id);
    if (candidate) candidates.delete(id);
    else if (candidates.size >= limits.maxPeers) candidates.delete(candidates.keys().next().value as string);
    candidate ??= { nonce: '', proofs: 0, held: [], windowStart: now, inWindow: 0 };
    // Re-inserted: the map's order is recency, its first entry the one to forget.
    candidates.set(id, candidate);
    if (now - candidate.windowStart >= 1000) {
      candidate.windowStart = now;
      candidate.inWindow = 0;
    }
    if (++candidate.inWindow > limits.candidatePacketsPerSecond) return drop('rate_limited', `more than ${limits.candidatePacketsPerSecond} datagrams a second before admission`, from);
    const { verdict, header } = verdictOf(datagram);
    if (verdict === 'not_rist') return drop(verdict, 'not a RIST main-profile datagram', from);
    if (verdict === 'not_encrypted') return drop(verdict, 'a RIST sender without the secret (unencrypted)', from);
    if (verdict === 'rate_limited') return drop(verdict, 'no key derivation left this second', from);
    const nonce = header?.nonce.toString('hex') ?? '';
    if (verdict === 'bad_key' || nonce !== candidate.nonce) {
      // A proof streak is unbroken datagrams under one nonce: noise from a wrong key resets it.
      candidate.nonce = nonce;
      candidate.proofs = 0;
      candidate.held = [];
      if (verdict === 'bad_key') return drop(verdict, 'the datagrams do not decrypt under the slicer\'s secret', from);
    }
    // Only proofs are held: a datagram with nothing to check (anyone can make one) takes no memory before admission.
    if (verdict !== 'proof') return;
    if (candidate.held.length < MAX_HELD) candidate.held.push(datagram);
    if (++candidate.proofs < limits.proofsToAdmit) return;
    if (admitted && now - admitted.lastProofAt < limits.idleMs) {
      return drop('busy', 'another sender with the secret holds the slicer', from);
    }
    admit(id, from, candidate.held);
  };

  socket.on('message', (datagram, from) => {
    if (closed) return;
    counts.received++;
    const id = `${from.address}:${from.port}`;
    if (admitted?.id !== id) return fromCandidate(id, datagram, from);
    const { verdict } = verdictOf(datagram);
    if (verdict === 'proof') admitted.lastProofAt = clock.now();
    if (verdict === 'proof' || verdict === 'neutral') return forward(admitted, datagram);
    drop(verdict, 'a datagram of the admitted sender was dropped', from);
  });

  const { port } = socket.address();
  return {
    port,
    get admitted() {
      return admitted?.id;
    },
    get tracked() {
      return candidates.size;
    },
    counts,
    setTarget(next) {
      target = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (closed) return resolve();
        closed = true;
        admitted?.upstream.close();
        admitted = undefined;
        candidates.clear();
        socket.close(() => resolve());
      }),
  };
}
