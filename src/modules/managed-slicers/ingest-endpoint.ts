import { createSocket } from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { IngestProtocol } from './managed-slicers.schema.js';

/** The protocols an ffmpeg slicer listens on; `zixi` has no ffmpeg implementation, `hls` push is not taken by this provisioner. */
export type ListenProtocol = Extract<IngestProtocol, 'srt' | 'rtmp' | 'rist'>;

export const isListenProtocol = (protocol: IngestProtocol): protocol is ListenProtocol => protocol === 'srt' || protocol === 'rtmp' || protocol === 'rist';

/** Why a protocol cannot be provisioned with ffmpeg, or undefined when it can. */
export function unsupportedReason(protocol: IngestProtocol): string | undefined {
  if (protocol === 'zixi') return 'zixi ingest needs the proprietary Zixi broadcaster and cannot be received with ffmpeg: choose srt, rtmp or rist';
  if (protocol === 'hls') return 'hls push ingest is not offered by the ffmpeg slicer provisioner: choose srt, rtmp or rist';
  return undefined;
}

/** The transport a protocol listens on, and the ports it takes: RIST uses an even port and the odd one after it (RTCP). */
export const portsOf = (protocol: ListenProtocol, port: number): { transport: 'tcp' | 'udp'; ports: number[] } =>
  protocol === 'rtmp' ? { transport: 'tcp', ports: [port] } : protocol === 'rist' ? { transport: 'udp', ports: [port, port + 1] } : { transport: 'udp', ports: [port] };

/**
 * The keyless base of the URL an encoder sends the source to; the URL the slicer shows adds its
 * stream key (stream-key.ts): `srt://h:p?passphrase=<key>...`, `rist://h:p?secret=<key>...`,
 * `rtmp://h:p/live/<key>`.
 */
export function ingestUrlOf(protocol: ListenProtocol, publicHost: string, port: number): string {
  const host = publicHost.includes(':') && !publicHost.startsWith('[') ? `[${publicHost}]` : publicHost;
  switch (protocol) {
    case 'srt':
      return `srt://${host}:${port}`;
    case 'rtmp':
      return `rtmp://${host}:${port}/live`;
    case 'rist':
      return `rist://${host}:${port}`;
  }
}

/** The port of an ingest URL this provisioner made, to keep it across restarts. */
export function portOfIngestUrl(url: string | null): number | undefined {
  if (!url) return undefined;
  const match = /^[a-z]+:\/\/(?:\[[^\]]+\]|[^/:?]+):(\d{1,5})(?:[/?]|$)/.exec(url);
  const port = match ? Number(match[1]) : NaN;
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
}

/** A port range `from-to` (PLAYLINE_SLICER_PORTS). */
export interface PortRange {
  from: number;
  to: number;
}

export function parsePortRange(text: string): PortRange {
  const match = /^\s*(\d{1,5})\s*-\s*(\d{1,5})\s*$/.exec(text);
  const from = Number(match?.[1]);
  const to = Number(match?.[2]);
  if (!match || from < 1 || to > 65535 || from > to) throw new Error(`PLAYLINE_SLICER_PORTS must be a range like 20000-20099, not ${text}`);
  return { from, to };
}

/**
 * Whether a port can be bound on `host` right now: null when free, else why not (e.g.
 * `EADDRINUSE`). Binds and releases at once; never throws.
 */
export function portProblem(transport: 'tcp' | 'udp', host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    if (transport === 'tcp') {
      const server = createServer();
      server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(null)));
      return;
    }
    const socket = createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', reuseAddr: false });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      socket.close();
      resolve(err.code ?? err.message);
    });
    socket.bind({ address: host, port, exclusive: true }, () => socket.close(() => resolve(null)));
  });
}

/** Why the ports of a protocol's listener cannot be bound, or null when all are free. */
export async function listenerPortProblem(protocol: ListenProtocol, host: string, port: number): Promise<string | null> {
  const { transport, ports } = portsOf(protocol, port);
  for (const p of ports) {
    const problem = await portProblem(transport, host, p);
    if (problem) return `${transport.toUpperCase()} port ${p} on ${host} is ${problem === 'EADDRINUSE' ? 'already in use' : `not available (${problem})`}`;
  }
  return null;
}

/**
 * Whether some process holds a listener of the protocol on `port` (a TCP socket in LISTEN, a
 * bound UDP socket), read from /proc/net without touching the port (Linux).
 */
export async function listenerHeld(protocol: ListenProtocol, port: number): Promise<boolean> {
  const { transport } = portsOf(protocol, port);
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of transport === 'tcp' ? ['tcp', 'tcp6'] : ['udp', 'udp6']) {
    const text = await readFile(`/proc/net/${table}`, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      if (!local?.endsWith(`:${hexPort}`)) continue;
      if (transport === 'udp' || fields[3] === '0A') return true;
    }
  }
  return false;
}
