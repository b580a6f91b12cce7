import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { eventually } from '../../../test/helpers/eventually.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mediaToolsSkip } from '../../../test/helpers/media.js';
import { keyedListenerInput, type KeyedListenProtocol } from './listener-input.js';

const skip = await mediaToolsSkip();
const KEY = 'k3y-of-the-slicer_0123456789ab';
const OTHER = 'someone-elses-guess_0123456789';
let port = 26_400;

/** ffmpeg as a slicer receives: the keyed listener, 2 s of what arrives copied to a file. */
async function listener(protocol: KeyedListenProtocol, dir: string): Promise<{ child: ChildProcess; done: Promise<number | null>; output: string; port: number; close: () => Promise<void> }> {
  port += 2;
  const input = await keyedListenerInput(protocol, '127.0.0.1', port, KEY);
  const output = join(dir, `${protocol}-${port}.ts`);
  const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', ...input.args, '-t', '2', '-c', 'copy', '-f', 'mpegts', output], { stdio: ['ignore', 'ignore', 'pipe'] });
  const done = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { child, done, output, port, close: async () => input.close?.() };
}

/** An encoder (or an outsider) sending `seconds` of test pattern to the listener with `query`. */
const send = (url: string, seconds: number, signal?: AbortSignal): Promise<number | null> =>
  new Promise((resolve) => {
    const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'quiet', '-re', '-f', 'lavfi', '-i', 'testsrc=size=160x90:rate=25', '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast', '-f', 'mpegts', url], { stdio: 'ignore', signal });
    child.on('error', () => undefined);
    child.once('close', resolve);
  });

/** Whether a UDP socket of this machine is bound to `listenPort` (the listener ffmpeg is up). */
const udpBound = (listenPort: number): boolean => {
  const hex = `:${listenPort.toString(16).toUpperCase().padStart(4, '0')} `;
  return ['/proc/net/udp', '/proc/net/udp6'].some((table) => {
    try {
      return readFileSync(table, 'utf8').split('\n').some((line) => line.trim().split(/\s+/)[1]?.endsWith(hex.trim()) === true);
    } catch {
      return false;
    }
  });
};

const urlOf = (protocol: KeyedListenProtocol, listenPort: number, key: string) =>
  protocol === 'srt' ? `srt://127.0.0.1:${listenPort}?passphrase=${key}&pbkeylen=16` : `rist://127.0.0.1:${listenPort}?secret=${key}&aes-type=128`;

const durationOf = async (file: string): Promise<number> =>
  new Promise((resolve) => {
    const child = spawn('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]);
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.once('close', () => resolve(Number.parseFloat(text) || 0));
  });

describe('keyed SRT and RIST listeners (security review N1, N2)', { skip }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'playline-listener-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const protocol of ['srt', 'rist'] as const) {
    test(`${protocol}: a sender with a wrong key is refused and does not take the listener; the slicer's own encoder then gets through; the key is never on ffmpeg's command line`, { timeout: 40_000 }, async () => {
      const slicer = await listener(protocol, dir);
      try {
        const cmdline = await readFile(`/proc/${slicer.child.pid}/cmdline`, 'utf8');
        assert.ok(!cmdline.includes(KEY), 'the key is not on the command line');
        // The outsider comes first, with a guess.
        await send(urlOf(protocol, slicer.port, OTHER), 2);
        assert.equal(await durationOf(slicer.output), 0, 'nothing the outsider sent was taken');
        await send(urlOf(protocol, slicer.port, KEY), 4);
        assert.equal(await slicer.done, 0);
        assert.ok((await durationOf(slicer.output)) >= 1.5, 'the encoder with the key was received');
      } finally {
        slicer.child.kill('SIGKILL');
        await slicer.close();
      }
    });
  }

  for (const protocol of ['srt', 'rist'] as const) {
    test(`${protocol}: a sender with a wrong key while the slicer's encoder is live is refused, and the encoder stays live`, { timeout: 40_000 }, async () => {
      const slicer = await listener(protocol, dir);
      try {
        // The encoder starts once the listener has bound its port (a RIST sender that starts first may never
        // be heard), and sends for as long as the test needs it.
        await eventually(() => udpBound(slicer.port), 'the listener is bound');
        const encoder = new AbortController();
        const own = send(urlOf(protocol, slicer.port, KEY), 30, encoder.signal);
        // The slicer's encoder is in: its media reaches the output.
        await eventually(() => existsSync(slicer.output) && statSync(slicer.output).size > 0, 'the encoder is live');
        await send(urlOf(protocol, slicer.port, OTHER), 2);
        assert.equal(await slicer.done, 0, 'the listener received its 2 s undisturbed');
        assert.ok((await durationOf(slicer.output)) >= 1.5);
        encoder.abort();
        await own;
      } finally {
        slicer.child.kill('SIGKILL');
        await slicer.close();
      }
    });
  }

  test('srt: a playlist sent as the stream, even with the key, makes ffmpeg connect nowhere (the container is forced)', { timeout: 30_000 }, async () => {
    const contacts: string[] = [];
    const web: Server = createServer((socket) => {
      contacts.push('connection');
      socket.destroy();
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    const webPort = (web.address() as AddressInfo).port;
    const playlist = join(dir, 'p.m3u8');
    await writeFile(playlist, ['#EXTM3U', '#EXT-X-TARGETDURATION:4', '#EXT-X-MEDIA-SEQUENCE:1', '#EXTINF:4,', `http://127.0.0.1:${webPort}/latest/meta-data/?x=.ts`, ''].join('\n'));
    const slicer = await listener('srt', dir);
    try {
      // The review's payload: the playlist's bytes streamed raw over SRT, looped.
      const size = (await readFile(playlist)).length;
      await new Promise<void>((resolve) => {
        const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'quiet', '-re', '-stream_loop', '20', '-f', 'rawvideo', '-pix_fmt', 'gray', '-video_size', `${size}x1`, '-i', playlist, '-c', 'copy', '-f', 'rawvideo', urlOf('srt', slicer.port, KEY)], { stdio: 'ignore' });
        child.once('close', () => resolve());
        setTimeout(() => child.kill('SIGKILL'), 6_000).unref();
      });
      slicer.child.kill('SIGKILL');
      await slicer.done;
      assert.deepEqual(contacts, [], 'the loopback listener saw nothing');
    } finally {
      await slicer.close();
      web.close();
    }
  });
});
