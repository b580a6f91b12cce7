import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { systemClock, type Clock } from '../../platform/clock.js';
import type { Destination, Outbound } from '../../platform/net/outbound.js';
import { amfString, decodeAmf0, encodeAmf0, type Amf0Value } from '../../platform/media/rtmp/amf0.js';
import { MSG_ABORT, MSG_COMMAND_AMF0, RtmpChunkReader, RtmpChunkWriter, type RtmpMessage } from '../../platform/media/rtmp/rtmp-chunks.js';

/** Where the relay really publishes: the values ffmpeg never sees. */
export interface RtmpDestination {
  tls: boolean;
  /** Where to connect, admitted by the outbound layer (its host names the tcUrl; TLS checks it). */
  to: Destination;
  app: string;
  /** The stream key (the `publish` name). */
  streamName: string;
  /** Extra trust roots for rtmps (tests). */
  ca?: string;
}

export interface RtmpRelayLimits {
  /** Bytes one direction may hold for a side that does not read before the relay ends the push. Default 8 MiB. */
  maxBufferedBytes?: number;
  /**
   * Bytes the destination may send the publisher per minute after the handshake (an RTMP server
   * answers a publisher with a few kilobytes: results, acknowledgements, pings). Default 4 MiB.
   */
  maxDestinationBytesPerMinute?: number;
  /** How long one side may leave the other's bytes unread (the relay paused) before the push ends. Default 10 s. */
  maxStallMs?: number;
  /** Default: the system clock. */
  clock?: Clock;
}

export interface RtmpRelay {
  /** What ffmpeg pushes to: loopback, a random application name, no secret. */
  readonly localUrl: string;
  /** Why the last connection to the destination failed or ended, in words without secrets. */
  readonly lastFailure: string | undefined;
  close(): Promise<void>;
}

const HANDSHAKE_BYTES = 1 + 1536 + 1536;
/** Commands whose fourth value (after name, transaction id and null) is the stream name. */
const STREAM_NAME_COMMANDS = new Set(['releaseStream', 'FCPublish', 'FCUnpublish', 'publish']);
const PLACEHOLDER_STREAM = 'stream';

/**
 * A loopback RTMP relay owned by this process, so that stream keys and credentials never reach
 * ffmpeg's command line: ffmpeg publishes to `rtmp://127.0.0.1:<port>/<random app>/stream`;
 * the relay connects to the destination (TCP or TLS), passes the handshake through, reads
 * ffmpeg's chunk stream, rewrites `connect` (app, tcUrl) and the stream name of `publish` and
 * its companions to the destination's values, and forwards every message re-chunked with full
 * headers. The destination's answers go back to ffmpeg untouched. A connection whose `connect`
 * names another application is closed (only the ffmpeg that was given the URL gets through).
 */
export async function startRtmpRelay(destination: RtmpDestination, outbound: Outbound, limits: RtmpRelayLimits = {}): Promise<RtmpRelay> {
  const maxBuffered = limits.maxBufferedBytes ?? 8 * 1024 * 1024;
  const perMinute = limits.maxDestinationBytesPerMinute ?? 4 * 1024 * 1024;
  const clock = limits.clock ?? systemClock;
  const maxStallMs = limits.maxStallMs ?? 10_000;
  const now = () => clock.now();
  const app = randomBytes(12).toString('hex');
  const sockets = new Set<Socket>();
  let lastFailure: string | undefined;
  const { host: toHost, port: toPort } = destination.to;
  const tcUrl = `${destination.tls ? 'rtmps' : 'rtmp'}://${toHost.includes(':') ? `[${toHost}]` : toHost}:${toPort}/${destination.app}`;

  const rewrite = (message: RtmpMessage): RtmpMessage | 'refuse' => {
    if (message.typeId !== MSG_COMMAND_AMF0) return message;
    let values: Amf0Value[];
    try {
      values = decodeAmf0(message.payload);
    } catch {
      return 'refuse';
    }
    const name = values[0]?.type === 'string' ? values[0].value : '';
    if (name === 'connect') {
      const command = values[2];
      if (command?.type !== 'object') return 'refuse';
      const given = command.value.find(([key]) => key === 'app')?.[1];
      if (given?.type !== 'string' || given.value !== app) return 'refuse';
      command.value = command.value.map(([key, value]): [string, Amf0Value] => {
        if (key === 'app') return [key, amfString(destination.app)];
        if (key === 'tcUrl') return [key, amfString(tcUrl)];
        return [key, value];
      });
    } else if (STREAM_NAME_COMMANDS.has(name) && values[3]?.type === 'string') {
      values[3] = amfString(destination.streamName);
    } else {
      return message;
    }
    return { ...message, payload: encodeAmf0(values) };
  };

  const onConnection = (client: Socket) => {
    sockets.add(client);
    const upstream: Socket = outbound.connect(destination.to, destination.tls ? (destination.ca ? { ca: destination.ca } : {}) : false);
    sockets.add(upstream);
    let connected = false;
    const pending: Buffer[] = [];
    let pendingBytes = 0;
    const stalls = new Set<() => void>();
    const end = (failure?: string) => {
      if (failure && lastFailure === undefined) lastFailure = failure;
      for (const cancel of stalls) cancel();
      stalls.clear();
      client.destroy();
      upstream.destroy();
    };
    // Each direction stops reading its source while the other side does not take what it is
    // given (paused until 'drain'); a side that leaves it unread for `maxStallMs`, or holds more
    // than the cap anyway, ends the push. A destination that sends more than its publisher reads
    // (a flood of small valid messages) can never make the server hold it.
    const deliver = (to: Socket, from: Socket, data: Buffer, what: string): void => {
      if (to.writableLength + data.length > maxBuffered) return end(`${what} held more than ${Math.round(maxBuffered / 1048576)} MiB that was not read: the push was ended`);
      if (to.write(data) || from.isPaused()) return;
      from.pause();
      const cancel = clock.setTimer(() => end(`${what}: what was sent was not read for ${maxStallMs / 1000} s, the push was ended`), maxStallMs);
      stalls.add(cancel);
      to.once('drain', () => {
        cancel();
        stalls.delete(cancel);
        from.resume();
      });
    };
    const send = (data: Buffer) => {
      if (connected) return deliver(upstream, client, data, 'the relay to the destination');
      pendingBytes += data.length;
      if (pendingBytes > maxBuffered) return end('the destination did not accept the connection while the publisher sent');
      pending.push(data);
    };
    upstream.once(destination.tls ? 'secureConnect' : 'connect', () => {
      connected = true;
      lastFailure = undefined;
      for (const data of pending.splice(0)) deliver(upstream, client, data, 'the relay to the destination');
    });
    // What the destination sends after the handshake, per minute (a flood of small valid
    // messages is no answer to a publisher).
    let windowStart = now();
    let windowBytes = -HANDSHAKE_BYTES;
    upstream.on('data', (data: Buffer) => {
      if (now() - windowStart >= 60_000) {
        windowStart = now();
        windowBytes = Math.min(windowBytes, 0);
      }
      windowBytes += data.length;
      if (windowBytes > perMinute) return end(`the destination sent more than ${Math.round(perMinute / 1048576)} MiB in a minute (an RTMP server answers a publisher with a few kilobytes): the push was ended`);
      deliver(client, upstream, data, 'the relay to the publisher');
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => end(`the destination ${connected ? 'dropped the connection' : 'could not be reached'} (${err.code ?? err.message})`));
    upstream.on('close', () => {
      sockets.delete(upstream);
      end('the destination closed the connection');
    });

    let handshake = 0;
    const reader = new RtmpChunkReader();
    const writer = new RtmpChunkWriter();
    client.on('data', (data: Buffer) => {
      if (handshake < HANDSHAKE_BYTES) {
        const take = Math.min(HANDSHAKE_BYTES - handshake, data.length);
        send(data.subarray(0, take));
        handshake += take;
        data = data.subarray(take);
        if (data.length === 0) return;
      }
      let messages: RtmpMessage[];
      try {
        messages = reader.push(data);
      } catch {
        return end('the local RTMP stream was malformed');
      }
      for (const message of messages) {
        if (message.typeId === MSG_ABORT) continue;
        const rewritten = rewrite(message);
        if (rewritten === 'refuse') return end('a local client that was not the publisher connected to the relay');
        send(writer.write(rewritten));
      }
    });
    client.on('error', () => end());
    client.on('close', () => {
      sockets.delete(client);
      // ffmpeg ending its side ends the publication (the receiver sees the stream end).
      upstream.end();
    });
  };

  const server: Server = createServer(onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    localUrl: `rtmp://127.0.0.1:${port}/${app}/${PLACEHOLDER_STREAM}`,
    get lastFailure() {
      return lastFailure;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
