import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { Destination, Outbound } from '../../platform/net/outbound.js';

export interface UdpRelay {
  /** The loopback port ffmpeg sends to (no address of the destination on its command line). */
  readonly port: number;
  readonly lastFailure: string | undefined;
  close(): Promise<void>;
}

/**
 * A loopback UDP relay for SRT pushes, so that the destination's address stays off ffmpeg's
 * command line as the passphrase does: ffmpeg sends to `127.0.0.1:<port>`; the datagrams of the
 * latest local sender (a retry is a new ffmpeg from a new port) go out from a socket connected
 * to the destination, and its answers come back to that sender. SRT's handshake and encryption
 * run end to end between ffmpeg and the destination: the relay only moves datagrams.
 */
export async function startUdpRelay(destination: Destination, outbound: Outbound): Promise<UdpRelay> {
  const local = createSocket('udp4');
  let peer: RemoteInfo | undefined;
  let upstream: { socket: Socket; queue: Buffer[] | undefined } | undefined;
  let lastFailure: string | undefined;

  const openUpstream = (sender: RemoteInfo) => {
    upstream?.socket.close();
    // Datagrams that come before the connect completed wait for it.
    const opened: { socket: Socket; queue: Buffer[] | undefined } = { socket: outbound.udp(destination, () => {
      for (const message of opened.queue ?? []) opened.socket.send(message);
      opened.queue = undefined;
    }), queue: [] };
    const socket = opened.socket;
    socket.on('message', (message) => {
      lastFailure = undefined;
      if (peer) local.send(message, peer.port, peer.address);
    });
    // A connected UDP socket learns of ICMP "port unreachable" as ECONNREFUSED.
    socket.on('error', (err: NodeJS.ErrnoException) => {
      lastFailure = `the destination ${err.code === 'ECONNREFUSED' ? 'refused the stream (nothing listens there)' : `could not be reached (${err.code ?? err.message})`}`;
    });
    peer = sender;
    return opened;
  };

  local.on('message', (message, sender) => {
    if (!upstream || !peer || peer.port !== sender.port || peer.address !== sender.address) upstream = openUpstream(sender);
    if (upstream.queue) upstream.queue.push(message);
    else upstream.socket.send(message);
  });
  local.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    local.once('error', reject);
    local.bind(0, '127.0.0.1', () => resolve());
  });
  return {
    port: local.address().port,
    get lastFailure() {
      return lastFailure;
    },
    close: async () => {
      upstream?.socket.close();
      await new Promise<void>((resolve) => local.close(() => resolve()));
    },
  };
}
