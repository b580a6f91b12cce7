import { createSocket } from 'node:dgram';
import { stat } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../../platform/clock.js';
import { keyedListenerInput, pushedPlaylistInput, type KeyedListenProtocol, type SourceInput } from './listener-input.js';
import { startRtmpIngestFront, type IngestPublisher, type IngestRefusal } from './rtmp-ingest-front.js';
import type { ListenProtocol } from './ingest-endpoint.js';
import { startRistIngestFront, type RistIngestLimits, type RistRefusal } from './rist-ingest-front.js';

/**
 * Where a slicer's source comes from, for as long as the slicer runs here: each run of its ffmpeg
 * asks for its input (`input`), and `close` ends it all when the slicer stops. Every source
 * has the slicer's stream key checked by the ingest admission before any media reaches ffmpeg
 * (hls push: by the API, through the same admission).
 */
export interface SlicerSource {
  input(signal: AbortSignal, again: boolean): Promise<SourceInput>;
  /** Whether the source takes encoders itself (the RTMP front listens in this process). */
  readonly listensHere: boolean;
  close(): Promise<void>;
}

/**
 * The ingest admission as one live event's source sees it (live/ingest-admission.ts, bound to the
 * event's protocol and slicer): every source asks it, none compares keys itself.
 */
export interface SourceAdmission {
  /** Whether an encoder presenting `key` from `remoteAddress` may publish (counted and logged when not). */
  admit(key: string, remoteAddress: string): boolean;
  /** The key material a listener that checks keys itself needs (SRT passphrase, RIST secret). */
  keyMaterial(): string;
  /** A wrong key that such a listener refused (counted, logged and paused like the others). */
  refused(remoteAddress: string): void;
}

/** What a listening source is built from: the event's port, its admission, and where other refusals are logged. */
export interface ListenerSourceOptions {
  bindHost: string;
  port: number;
  clock: Clock;
  admission: SourceAdmission;
  /** Connections closed before publishing for a reason other than the key (the admission logs those). */
  onRefused: (refusal: IngestRefusal | RistRefusal) => void;
  /** Bounds of RIST's UDP front (PLAYLINE_RIST_*). */
  ristLimits?: RistIngestLimits;
}

/**
 * The source of each listening protocol. The seam for a new front: a protocol whose listener
 * Playline runs itself (RTMP today; RIST's UDP front next) maps here to a source that asks
 * `options.admission`, and nothing else changes.
 */
export const listenerSources: Record<ListenProtocol, (options: ListenerSourceOptions) => Promise<SlicerSource>> = {
  rtmp: (options) => rtmpFrontSource(options),
  srt: (options) => Promise.resolve(keyedListenerSource('srt', options)),
  // RIST: ffmpeg's keyed listener. The UDP front (ristFrontSource, rist-ingest-front.ts) that admits
  // only senders whose datagrams decrypt is built and unit-tested, but not in front of slicers yet:
  // the LL-HLS window it fed had parts too short for strict players (real-players e2e), to be fixed first.
  rist: (options) => Promise.resolve(keyedListenerSource('rist', options)),
};

/** SRT: ffmpeg's own listener, the key (from the admission) a protocol option (listener-input.ts); a fresh named pipe per run. */
export const keyedListenerSource = (protocol: KeyedListenProtocol, options: Pick<ListenerSourceOptions, 'bindHost' | 'port' | 'admission'>): SlicerSource => ({
  input: () => keyedListenerInput(protocol, options.bindHost, options.port, options.admission.keyMaterial()),
  listensHere: false,
  close: () => Promise.resolve(),
});

/**
 * RTMP: Playline's ingest front takes the encoders on the slicer's port and lets through only a
 * publisher whose stream name is the key; each publisher's FLV is one run of ffmpeg, read on its
 * stdin (`-f flv -i pipe:0`, nothing else may be opened). A run that ends while its publisher is
 * still connected hangs the publisher up: an FLV stream cannot be resumed mid-way, the encoder
 * reconnects and the next run starts from its header.
 */
export async function rtmpFrontSource(options: ListenerSourceOptions): Promise<SlicerSource> {
  let pending: { publisher: IngestPublisher; flv: PassThrough } | undefined;
  let waiting: ((next: { publisher: IngestPublisher; flv: PassThrough }) => void) | undefined;
  const front = await startRtmpIngestFront({
    host: options.bindHost,
    port: options.port,
    clock: options.clock,
    checkKey: (name, remoteAddress) => options.admission.admit(name, remoteAddress),
    onPublisher: (publisher) => {
      const flv = new PassThrough();
      const next = { publisher, flv };
      if (waiting) waiting(next);
      else pending = next;
      void publisher.ended.then(() => {
        if (pending?.publisher === publisher) pending = undefined;
      });
      return flv;
    },
    // A wrong key was counted and logged by the admission; the other refusals (floods, bad handshakes) are told here.
    onRefused: (refusal) => {
      if (refusal.reason !== 'bad_key') options.onRefused(refusal);
    },
  });
  return {
    listensHere: true,
    async input(signal) {
      const next =
        pending ??
        (await new Promise<{ publisher: IngestPublisher; flv: PassThrough } | undefined>((resolve) => {
          waiting = resolve;
          signal.addEventListener('abort', () => resolve(undefined), { once: true });
        }));
      waiting = undefined;
      pending = undefined;
      if (!next) return { args: [] };
      return {
        args: ['-protocol_whitelist', 'pipe', '-f', 'flv', '-i', 'pipe:0'],
        stdin: next.flv,
        close: async () => next.publisher.disconnect('the slicer\'s ffmpeg ended; reconnect to publish again'),
      };
    },
    close: () => front.close(),
  };
}

/** A free UDP port on loopback, for one run of ffmpeg's RIST listener (released at once: ffmpeg binds it next). */
const freeLoopbackPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createSocket('udp4');
    probe.once('error', reject);
    probe.bind(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

/**
 * RIST: Playline's UDP front takes the slicer's public port and forwards only the datagrams of
 * one sender that proved it holds the secret (rist-ingest-front.ts); ffmpeg's librist listener,
 * keyed as well, listens on a loopback port the front picks afresh for each run.
 */
export async function ristFrontSource(options: {
  bindHost: string; port: number; streamKey: string; clock: Clock; limits?: RistIngestLimits;
  onRefused?: (refusal: RistRefusal) => void; onAdmitted?: (remoteAddress: string) => void;
}): Promise<SlicerSource> {
  const front = await startRistIngestFront({
    host: options.bindHost,
    port: options.port,
    secret: options.streamKey,
    clock: options.clock,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.onRefused ? { onRefused: options.onRefused } : {}),
    ...(options.onAdmitted ? { onAdmitted: options.onAdmitted } : {}),
  });
  let target: number | undefined;
  return {
    listensHere: true,
    async input() {
      const port = await freeLoopbackPort();
      const input = await keyedListenerInput('rist', '127.0.0.1', port, options.streamKey);
      target = port;
      front.setTarget(port);
      return {
        ...input,
        close: async () => {
          if (target === port) front.setTarget((target = undefined));
          await input.close?.();
        },
      };
    },
    close: () => front.close(),
  };
}

const modifiedAt = (file: string): Promise<number | undefined> => stat(file).then((st) => st.mtimeMs, () => undefined);

/**
 * hls push: the encoder's playlist, pushed through the API (its key checked there, its playlist
 * validated). A run reads it once it exists; after a run ended (the source stalled) only once the
 * encoder wrote it anew, as the old one would replay its last segments into the live window.
 */
export const pushedPlaylistSource = (playlist: string): SlicerSource => ({
  listensHere: false,
  async input(signal, again) {
    const stale = again ? await modifiedAt(playlist) : undefined;
    while (!signal.aborted) {
      const written = await modifiedAt(playlist);
      if (written !== undefined && written !== stale) break;
      await delay(250, undefined, { signal }).catch(() => undefined);
    }
    return pushedPlaylistInput(playlist);
  },
  close: () => Promise.resolve(),
});
