import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { systemClock, type Clock } from '../../platform/clock.js';
import type { Amf0Value } from '../../platform/media/rtmp/amf0.js';
import type { RtmpMessage } from '../../platform/media/rtmp/rtmp-chunks.js';
import { PublishingSession, type IngestPublisher } from './rtmp-ingest-session.js';
import { IngestWire, commandOf, commandResult, connectPreamble, connectResult, publishStatus } from './rtmp-ingest-wire.js';

export type { IngestEndReason, IngestPublisher, IngestSessionEnd } from './rtmp-ingest-session.js';

/** Why a connection was closed before it published. */
export type IngestRefusalReason =
  /** Handshake and commands did not finish within `setupDeadlineMs`. */
  | 'setup_deadline'
  /** The first byte was not RTMP version 3 (HTTP, TLS, RTMPE, garbage). */
  | 'bad_handshake'
  /** A chunk stream or command sequence that cannot be followed. */
  | 'protocol_error'
  /** More than `maxPrePublishBytes` came in, or the answers were left unread. */
  | 'too_many_bytes'
  /** `maxPendingConnections` (or `maxPendingPerAddress`) were setting up: this one made room for a new one. */
  | 'evicted'
  /** The stream name is not the slicer's stream key. */
  | 'bad_key'
  /** The right key, while another encoder publishes. */
  | 'busy'
  /** `checkKey` threw. */
  | 'unavailable'
  /** The client closed the connection before publishing. */
  | 'hung_up';

/** A connection closed before publishing; `detail` never contains the stream name it sent. */
export interface IngestRefusal {
  reason: IngestRefusalReason;
  detail: string;
  remoteAddress: string;
}

export interface RtmpIngestLimits {
  /** Time from accepting a connection to an accepted `publish`. Default 10 s. */
  setupDeadlineMs?: number;
  /** Connections that have not published, at most; a new one closes one of the address holding most (`admitSetup`). Default 16. */
  maxPendingConnections?: number;
  /** Connections of one remote address that have not published, at most; a new one closes that address's own least advanced. Default 4. */
  maxPendingPerAddress?: number;
  /** Bytes a connection may send before an accepted `publish` (the handshake is 3,073). Default 64 KiB. */
  maxPrePublishBytes?: number;
  /** How long the consumer may leave the stream untaken (the encoder paused) before the session ends. Default 10 s. */
  maxStallMs?: number;
  /** Bytes the consumer's Writable may hold unread before the session ends. Default 8 MiB. */
  maxBufferedBytes?: number;
  /** How long a publishing encoder may send nothing before the session ends (and frees the slot). Default 10 s. */
  maxIdleMs?: number;
}

export interface RtmpIngestFrontOptions {
  /** Interface to listen on. */
  host: string;
  /** Port to listen on; 0 picks a free one (see `RtmpIngestFront.port`). */
  port: number;
  /** Whether `streamName` (the `publish` name), sent from `remoteAddress`, is admitted (the ingest admission: constant time, failure pause). */
  checkKey(streamName: string, remoteAddress: string): boolean;
  /**
   * Called when an encoder is accepted; returns where its FLV byte stream goes (e.g. the
   * slicer ffmpeg's stdin, read with `-f flv -i pipe:0`). The front ends that Writable when the
   * session ends, or destroys it when the consumer stalled. Throwing ends the session at once.
   */
  onPublisher(publisher: IngestPublisher): Writable;
  /** Told of every connection closed before it published (for logs and metrics). */
  onRefused?(refusal: IngestRefusal): void;
  limits?: RtmpIngestLimits;
  /** Default: the system clock. */
  clock?: Clock;
}

export interface RtmpIngestFront {
  /** The bound port. */
  readonly port: number;
  /** The encoder publishing now, if any. */
  readonly publisher: IngestPublisher | undefined;
  /** Ends the current publisher's session (stream key rotation); false when none publishes. */
  disconnectPublisher(detail?: string): boolean;
  /** Stops listening and closes every connection; the current session ends with `front_closed`. */
  close(): Promise<void>;
}

const DEFAULT_LIMITS: Required<RtmpIngestLimits> = {
  setupDeadlineMs: 10_000,
  maxPendingConnections: 16,
  maxPendingPerAddress: 4,
  maxPrePublishBytes: 64 * 1024,
  maxStallMs: 10_000,
  maxBufferedBytes: 8 * 1024 * 1024,
  maxIdleMs: 10_000,
};
const SIG = 1536;
const RTMP_VERSION = 3;

/**
 * The RTMP server encoders publish to for one slicer port: it answers the handshake and the
 * commands itself, checks the `publish` name against the slicer's stream key, and only then
 * turns the encoder's media into an FLV stream for the slicer's ffmpeg, which never listens on
 * a port (security review N2). One publisher at a time; a connection holds no slot until it
 * published with the right key, so an outsider who connects first, idles or sends a wrong key
 * never keeps the slicer's own encoder out.
 */
export async function startRtmpIngestFront(options: RtmpIngestFrontOptions): Promise<RtmpIngestFront> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const clock = options.clock ?? systemClock;
  const setups = new PendingSetups(limits.maxPendingConnections, limits.maxPendingPerAddress);
  let current: PublishingSession | undefined;
  let closed = false;

  const setUp = (socket: Socket): void => {
    if (closed) return void socket.destroy();
    socket.setNoDelay(true);
    const remoteAddress = socket.remoteAddress ?? 'unknown';
    const wire = new IngestWire(socket);
    let phase: 'c0c1' | 'c2' | 'commands' | 'refused' | 'published' = 'c0c1';
    let handshake = Buffer.alloc(0);
    let connected = false;
    /** How far the setup got (handshake, connect, createStream): the least advanced make room first. */
    let progress = 0;

    const refuse = (reason: IngestRefusal['reason'], detail: string, answer?: RtmpMessage): void => {
      if (phase === 'refused' || phase === 'published') return;
      phase = 'refused';
      if (!closed) options.onRefused?.({ reason, detail, remoteAddress });
      if (!answer || socket.destroyed) return void socket.destroy();
      // The encoder is told why (its log shows it) before the connection closes. What it still
      // sends is dropped, and the setup deadline ends a peer that does not close its side.
      wire.send(answer);
      socket.end();
    };

    // A new connection is always let in; the one that makes room is the least advanced of its own
    // address (at its cap) or of the address holding the most (at the overall cap): a flood from
    // one address only ever closes its own connections, never an encoder's of another.
    setups.admit(socket, remoteAddress, () => progress, (scope) => {
      refuse('evicted', scope === 'address' ? `${limits.maxPendingPerAddress} connections from this address were setting up: its least advanced was closed` : `${limits.maxPendingConnections} connections were setting up: one of the address holding the most was closed`);
      socket.destroy();
    });
    const cancelDeadline = clock.setTimer(() => {
      refuse('setup_deadline', `handshake and publish did not finish within ${limits.setupDeadlineMs / 1000} s`);
      socket.destroy();
    }, limits.setupDeadlineMs);
    // 'close' follows every error; a publishing session adds its own listeners.
    socket.on('error', () => undefined);
    socket.once('close', () => {
      setups.remove(socket);
      cancelDeadline();
      refuse('hung_up', 'the client closed the connection before publishing');
    });

    const publish = (nameValue: Amf0Value | undefined, streamId: number, rest: RtmpMessage[]): void => {
      const name = nameValue?.type === 'string' ? nameValue.value : '';
      const refuseWith = (reason: IngestRefusal['reason'], detail: string, code: string, description: string) =>
        refuse(reason, detail, publishStatus(streamId, 'error', code, description));
      let accepted: boolean;
      try {
        accepted = name !== '' && options.checkKey(name, remoteAddress);
      } catch {
        return refuseWith('unavailable', 'the stream key could not be checked', 'NetStream.Publish.Denied', 'The stream cannot be taken now.');
      }
      if (!accepted) return refuseWith('bad_key', 'the stream key was not accepted', 'NetStream.Publish.BadName', 'The stream key is not valid.');
      if (current) return refuseWith('busy', 'another encoder is publishing to this slicer', 'NetStream.Publish.BadName', 'stream is already publishing');

      phase = 'published';
      setups.remove(socket);
      cancelDeadline();
      socket.off('data', onData);
      const session: PublishingSession = new PublishingSession(wire, remoteAddress, streamId, clock, limits, () => {
        if (current === session) current = undefined;
      });
      current = session;
      let sink: Writable;
      try {
        sink = options.onPublisher(session);
      } catch {
        return session.end('consumer_closed', 'the consumer could not take the stream');
      }
      session.start(sink, rest);
    };

    const onMessage = (message: RtmpMessage, rest: RtmpMessage[]): void => {
      if (wire.control(message)) return;
      // Media or data before an accepted publish is dropped (it counts against the byte cap).
      const command = commandOf(message);
      if (!command) return;
      const { name, transactionId, values } = command;
      if (name === 'connect') {
        if (connected) return refuse('protocol_error', 'connect was sent twice');
        connected = true;
        progress = 3;
        return wire.send(...connectPreamble(), connectResult(transactionId));
      }
      if (!connected) return refuse('protocol_error', 'a command came before connect');
      if (name === 'releaseStream' || name === 'FCPublish') return wire.send(commandResult(transactionId));
      if (name === 'createStream') {
        progress = 4;
        return wire.send(commandResult(transactionId, 1));
      }
      if (name === 'publish') return publish(values[3], message.streamId, rest);
    };

    const onData = (data: Buffer): void => {
      if (phase === 'refused') return;
      wire.received(data.length);
      if (wire.bytesIn > limits.maxPrePublishBytes) {
        return refuse('too_many_bytes', `more than ${limits.maxPrePublishBytes / 1024} KiB came before publishing`);
      }
      if (phase === 'c0c1' || phase === 'c2') {
        handshake = Buffer.concat([handshake, data]);
        if (handshake[0] !== RTMP_VERSION) return refuse('bad_handshake', 'the connection did not open with an RTMP handshake');
        if (phase === 'c0c1') {
          if (handshake.length < 1 + SIG) return;
          // S0; S1 with time and version zero, which ffmpeg and librtmp (OBS) answer with the
          // plain handshake, no digest; S2 = the echo of C1.
          const s1 = Buffer.concat([Buffer.alloc(8), randomBytes(SIG - 8)]);
          socket.write(Buffer.concat([Buffer.from([RTMP_VERSION]), s1, handshake.subarray(1, 1 + SIG)]));
          phase = 'c2';
          progress = 1;
        }
        // C2 is not checked: a wrong echo proves nothing the stream key does not.
        if (handshake.length < 1 + 2 * SIG) return;
        data = handshake.subarray(1 + 2 * SIG);
        handshake = Buffer.alloc(0);
        phase = 'commands';
        progress = Math.max(progress, 2);
      }
      let messages: RtmpMessage[];
      try {
        messages = wire.reader.push(data);
      } catch {
        return refuse('protocol_error', 'the RTMP chunk stream cannot be read');
      }
      for (let i = 0; i < messages.length && phase === 'commands'; i++) {
        const message = messages[i];
        if (message) onMessage(message, messages.slice(i + 1));
      }
      if (phase === 'commands' && socket.writableLength > limits.maxPrePublishBytes) {
        refuse('too_many_bytes', 'the client does not read what it is answered');
      }
    };
    socket.on('data', onData);
  };

  const server = createServer(setUp);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host, port: options.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // After listening, an error is an accept that failed (EMFILE...): the listener goes on.
  server.on('error', () => undefined);
  const { port } = server.address() as AddressInfo;

  return {
    port,
    get publisher() {
      return current;
    },
    disconnectPublisher(detail = 'the publisher was disconnected') {
      if (!current) return false;
      current.disconnect(detail);
      return true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        setups.closeAll();
        current?.end('front_closed', 'the ingest front was closed');
        server.close(() => resolve());
      }),
  };
}

/** A connection setting up: its address, how far it got, and how to close it to make room. */
interface PendingSetup {
  address: string;
  progress: () => number;
  evict: (scope: 'address' | 'overall') => void;
}

/**
 * The connections that have not published yet, bounded per remote address and overall. Making
 * room never refuses the newcomer (an encoder that connects during a flood gets in): it closes
 * the least advanced (then oldest) connection of the newcomer's own address when that address is
 * at its cap, else of the address holding the most when all are taken. An address flooding with
 * keyless connects thus only churns its own slots, and an encoder of another address keeps its
 * slot through the handshake and the commands to its publish (where the stream key decides).
 */
class PendingSetups {
  // Insertion order is age order.
  private readonly pending = new Map<Socket, PendingSetup>();
  private readonly perAddress = new Map<string, number>();

  constructor(
    private readonly maxTotal: number,
    private readonly maxPerAddress: number,
  ) {}

  admit(socket: Socket, address: string, progress: () => number, evict: PendingSetup['evict']): void {
    if ((this.perAddress.get(address) ?? 0) >= this.maxPerAddress) this.evictFrom(address, 'address');
    else if (this.pending.size >= this.maxTotal) this.evictFrom(this.busiestAddress(), 'overall');
    this.pending.set(socket, { address, progress, evict });
    this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
  }

  remove(socket: Socket): void {
    const setup = this.pending.get(socket);
    if (!setup) return;
    this.pending.delete(socket);
    const left = (this.perAddress.get(setup.address) ?? 1) - 1;
    if (left <= 0) this.perAddress.delete(setup.address);
    else this.perAddress.set(setup.address, left);
  }

  closeAll(): void {
    const sockets = [...this.pending.keys()];
    this.pending.clear();
    this.perAddress.clear();
    for (const socket of sockets) socket.destroy();
  }

  private busiestAddress(): string | undefined {
    let busiest: string | undefined;
    let most = 0;
    for (const [address, count] of this.perAddress) {
      if (count > most) [busiest, most] = [address, count];
    }
    return busiest;
  }

  private evictFrom(address: string | undefined, scope: 'address' | 'overall'): void {
    let victim: [Socket, PendingSetup] | undefined;
    for (const entry of this.pending) {
      if (entry[1].address !== address) continue;
      if (!victim || entry[1].progress() < victim[1].progress()) victim = entry;
    }
    if (!victim) return;
    this.remove(victim[0]);
    victim[1].evict(scope);
  }
}
