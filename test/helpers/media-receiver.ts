import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createSocket as createUdpSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { listenerHeld } from '../../src/modules/managed-slicers/ingest-endpoint.js';
import { eventually } from './eventually.js';

/**
 * A stand-in for a remote publishing destination in tests: ffmpeg listening (RTMP, SRT...) and
 * recording what it receives, with how much it wrote so far; ffprobe to measure a recording.
 */
const run = promisify(execFile);

/** A receiver: ffmpeg listening on `url`, copying what it gets into `file`, reporting how much it wrote. */
export interface Receiver {
  child: ChildProcess;
  /** Output time written so far, microseconds. */
  outTimeUs(): number;
  exited: Promise<number | null>;
  kill(): Promise<void>;
}

export function startReceiver(input: string[], file: string): Receiver {
  const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-progress', 'pipe:1', '-stats_period', '0.5', '-y', ...input, '-c', 'copy', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let outTime = 0;
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const m = /^out_time_us=(\d+)/.exec(line);
      if (m) outTime = Math.max(outTime, Number(m[1]));
    }
  });
  child.stderr?.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    outTimeUs: () => outTime,
    exited,
    async kill() {
      // SIGTERM: ffmpeg finishes the recording it holds (for ffprobe) and drops the connection.
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The receiver's exit code once it exits, or 'running' if it still runs after `ms`. The deadline's
 * timer is cleared when the receiver exits first: a bare `setTimeout` in a race keeps the test
 * process alive for the rest of its time after the last test (it cost publishing.media 28 s).
 */
export async function exitedWithin(receiver: Pick<Receiver, 'exited'>, ms: number): Promise<number | null | 'running'> {
  let deadline: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([receiver.exited, new Promise<'running'>((resolve) => (deadline = setTimeout(() => resolve('running'), ms)))]);
  } finally {
    clearTimeout(deadline);
  }
}

/** The span of video timestamps ffprobe reads in a recording (seconds). */
export async function videoSeconds(file: string): Promise<number> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time', '-of', 'csv=p=0', file]);
  const times = stdout.split('\n').map((line) => Number.parseFloat(line)).filter((n) => Number.isFinite(n));
  return times.length === 0 ? 0 : Math.max(...times) - Math.min(...times);
}

/** A port free for TCP (RTMP) or UDP (SRT) right now. */
export async function freePort(kind: 'tcp' | 'udp'): Promise<number> {
  if (kind === 'udp') {
    const socket = createUdpSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const { port } = socket.address();
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    return port;
  }
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once a receiver listens on `port` (RTMP: TCP; SRT: UDP), read from /proc/net without touching the port. */
export async function receiverListening(protocol: 'rtmp' | 'srt', port: number): Promise<void> {
  await eventually(() => listenerHeld(protocol, port), `the ${protocol} receiver listens on ${port}`, 30_000);
}
