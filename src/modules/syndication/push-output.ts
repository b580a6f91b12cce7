import { secretFifo, type SecretFifo } from '../../platform/media/secret-fifo.js';
import type { Destination, Outbound } from '../../platform/net/outbound.js';
import { startHttpPushRelay, type HttpPushRelay } from './http-push-relay.js';
import type { PushPlan } from './push-plan.js';
import { startRtmpRelay, type RtmpRelay } from './rtmp-relay.js';
import { startUdpRelay, type UdpRelay } from './udp-relay.js';

/** Where one run of a push sends the stream: ffmpeg's output arguments and what was opened for them. */
export interface PushOutput {
  /** ffmpeg's output arguments, the URL last: a loopback relay, or the SRT/RIST address. */
  args: string[];
  /** Whether the destination took the stream yet (HLS push: once it accepted a file). */
  accepting: () => boolean;
  /** Why the destination ended the stream, when the relay saw it. */
  failure: () => string | undefined;
  /** Closes the relay and the secret pipe, once ffmpeg is gone. */
  close(): Promise<void>;
}

type Pushed = Exclude<PushPlan, { kind: 'hls-pull' }>;

/**
 * Opens what a push needs towards its destination for one run: per protocol, a loopback relay
 * that carries the credentials (so no secret reaches ffmpeg's command line or a log) and the
 * output arguments that send to it. `refused` ends the run when the destination refuses an
 * HLS upload (ffmpeg would go on after it).
 */
export async function openPushOutput(plan: Pushed, to: Destination, outbound: Outbound, ca: string | undefined, refused: (reason: string) => void): Promise<PushOutput> {
  const tls = ca ? { ca } : {};
  if (plan.kind === 'hls-push') {
    const relay = await startHttpPushRelay({ baseUrl: plan.baseUrl, to, ...tls }, outbound, refused);
    return withRelay(relay, ['-f', 'hls', '-method', 'PUT', '-hls_time', '2', '-hls_list_size', '6', '-hls_flags', 'delete_segments', `${relay.localBase}index.m3u8`], () => relay.accepted > 0);
  }
  if (plan.kind === 'rtmp') {
    const relay = await startRtmpRelay({ tls: plan.tls, to, app: plan.app, streamName: plan.streamName, ...tls }, outbound);
    return withRelay(relay, ['-f', 'flv', '-flvflags', 'no_duration_filesize', relay.localUrl]);
  }
  const options = Object.entries(plan.options);
  // Passphrases and stream ids reach ffmpeg as a preset read from a named pipe, never argv.
  const fifo: SecretFifo | undefined = options.length > 0 ? await secretFifo(options.map(([k, v]) => `${k}=${v.replace(/[\r\n]/g, '')}\n`).join('')) : undefined;
  const preset = fifo ? ['-fpre', fifo.path] : [];
  if (plan.scheme === 'rist') {
    // RIST pairs ports for RTP and RTCP, so it has no relay: its address stays on the command line.
    return { args: ['-f', 'mpegts', ...preset, outbound.ffmpegUrl('rist', to)], accepting: () => true, failure: () => undefined, close: async () => fifo?.close() };
  }
  // SRT runs over one UDP port: a loopback relay keeps the address off the command line too.
  const relay = await startUdpRelay(to, outbound).catch(async (err: unknown) => {
    await fifo?.close();
    throw err;
  });
  return withRelay(relay, ['-f', 'mpegts', ...preset, `srt://127.0.0.1:${relay.port}`], () => true, fifo);
}

function withRelay(relay: RtmpRelay | HttpPushRelay | UdpRelay, args: string[], accepting: () => boolean = () => true, fifo?: SecretFifo): PushOutput {
  return {
    args,
    accepting,
    failure: () => relay.lastFailure,
    close: async () => {
      await relay.close();
      await fifo?.close();
    },
  };
}

/** The whole command line of a push run: the live window read at its own pace, copied to the output. */
export const pushArgs = (input: string, output: readonly string[]): string[] => [
  '-hide_banner', '-nostdin', '-loglevel', 'error', '-progress', 'pipe:1', '-stats_period', '1',
  // The slicer's live window, read as HLS from local files only (the output's protocols are the muxer's own).
  '-re', '-protocol_whitelist', 'file', '-f', 'hls', '-live_start_index', '-3', '-i', input,
  '-map', '0:v:0?', '-map', '0:a:0?', '-c', 'copy', ...output,
];
