/**
 * Live glass-to-glass latency (issue 29): an encoder draws its own clock into every picture (20
 * blocks, black or white, the milliseconds since it started, bit by bit), pushes it over SRT to two
 * slicers (`passthrough` and the `sd-480p` transcode) and over UDP to the baseline, ffmpeg reading
 * the encoder directly (the pipeline without Playline: it decodes each frame as it arrives). Stock
 * hls.js in Chromium plays each slicer with `lowLatencyMode` on and off; each shown frame
 * (requestVideoFrameCallback: its expected display time) is read back from a canvas and compared
 * with the encoder's clock. Median and p95 over BENCH_LIVE_S seconds (default 60) of playing,
 * after a warm-up; also hls.js' own figure, now − the playing frame's EXT-X-PROGRAM-DATE-TIME
 * (the slicer's ingest clock: it leaves out what happens before the slicer). The encoder's clock
 * starts when its process is spawned: every figure, the baseline's too, includes the time ffmpeg
 * takes to produce its first frame (the same offset for all).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { chromium, type Page } from 'playwright-core';
import { PlaylineClient } from '../src/client/index.js';
import { signPlaybackUrl } from '../src/modules/playback-edge/playback-token.js';
import { startBenchServer } from './lib/http-load.js';
import type { Benchmark, Comparison } from './lib/report.js';

const server = new URL('./servers/api-server.ts', import.meta.url).pathname;
const CHROMIUM = process.env.PLAYLINE_CHROMIUM ?? '/usr/bin/chromium';
const WIDTH = 320;
const HEIGHT = 180;
const BITS = 20;
const BLOCK = WIDTH / BITS;
const BAND = 32;
const FPS = 25;

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};

/** The encoder's clock as drawn: bit i of floor(T × 1000) mod 2^20 in block i of the top band. */
const CLOCK_PICTURE = `nullsrc=s=${WIDTH}x${HEIGHT}:r=${FPS},geq=lum='if(lt(Y\\,${BAND})\\,255*mod(floor(mod(floor(T*1000)\\,${2 ** BITS})/pow(2\\,floor(X/${BLOCK})))\\,2)\\,96+X/4)':cb=128:cr=128`;

/** Milliseconds since the encoder started, read from a grey band `width` wide (the top rows of a frame, row `y` sampled). */
const readClock = (luma: (x: number) => number, width: number): number => {
  let ms = 0;
  for (let i = 0; i < BITS; i++) if (luma(Math.floor(((i + 0.5) * BLOCK * width) / WIDTH)) >= 128) ms += 2 ** i;
  return ms;
};

/** The player page: hls.js plays `url`; each shown frame's latency against the encoder clock is kept. */
const page = (hlsJs: string) => `<!doctype html><meta charset="utf-8"><video id="video" muted playsinline></video><canvas id="c"></canvas>
<script>${hlsJs}</script>
<script>
window.samples = []; window.pdt = []; window.errors = [];
window.start = (url, lowLatencyMode, encoderStart) => {
  const video = document.getElementById('video');
  const canvas = document.getElementById('c');
  const hls = new Hls({ lowLatencyMode });
  hls.on(Hls.Events.ERROR, (_e, d) => { if (d.fatal) window.errors.push(d.details); });
  hls.on(Hls.Events.MANIFEST_PARSED, () => video.play());
  hls.loadSource(url);
  hls.attachMedia(video);
  window.hls = hls;
  const onFrame = (_now, meta) => {
    const w = video.videoWidth, h = video.videoHeight;
    if (w > 0) {
      canvas.width = w; canvas.height = h;
      const ctx = canvas.getContext('2d', { willReadFrequently: true });
      ctx.drawImage(video, 0, 0, w, h);
      const row = ctx.getImageData(0, Math.floor(${BAND / 2} * h / ${HEIGHT}), w, 1).data;
      let ms = 0;
      for (let i = 0; i < ${BITS}; i++) if (row[4 * Math.floor((i + 0.5) * ${BLOCK} * w / ${WIDTH})] >= 128) ms += 2 ** i;
      const shown = performance.timeOrigin + meta.expectedDisplayTime;
      // The clock wraps every 2^20 ms: the capture time nearest before the display.
      let captured = encoderStart + ms;
      while (captured + ${2 ** BITS} <= shown) captured += ${2 ** BITS};
      window.samples.push({ at: shown, latency: shown - captured });
      if (hls.playingDate) window.pdt.push({ at: Date.now(), latency: Date.now() - hls.playingDate.getTime() });
    }
    video.requestVideoFrameCallback(onFrame);
  };
  video.requestVideoFrameCallback(onFrame);
};
</script>`;

async function site(html: string): Promise<{ url: string; server: Server }> {
  const s = createServer((_q, r) => r.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(s.address() as { port: number }).port}/`, server: s };
}

/** The baseline: ffmpeg decodes the encoder's UDP stream as it comes; each frame's latency against the encoder clock (Node reads the raw band). */
function directReader(port: number, encoderStart: () => number, samples: Array<{ at: number; latency: number }>): ChildProcess {
  const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-fflags', 'nobuffer', '-flags', 'low_delay', '-probesize', '32768', '-analyzeduration', '0',
    '-i', `udp://127.0.0.1:${port}?fifo_size=100000&overrun_nonfatal=1`, '-map', '0:v', '-vf', `crop=${WIDTH}:${BAND}:0:0,format=gray`, '-f', 'rawvideo', 'pipe:1'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const frameBytes = WIDTH * BAND;
  let pending = Buffer.alloc(0);
  child.stdout?.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= frameBytes) {
      const frame = pending.subarray(0, frameBytes);
      pending = pending.subarray(frameBytes);
      const now = Date.now();
      const ms = readClock((x) => frame[(BAND / 2) * WIDTH + x] as number, WIDTH);
      let captured = encoderStart() + ms;
      while (captured + 2 ** BITS <= now) captured += 2 ** BITS;
      samples.push({ at: now, latency: now - captured });
    }
  });
  return child;
}

const freePort = async (): Promise<number> => {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  socket.close();
  return port;
};

export const liveLatencyBenchmark: Benchmark = {
  name: 'live-latency',
  description: 'glass-to-glass: an encoder\'s clock drawn in the picture, read back from frames hls.js shows in Chromium (LL-HLS lowLatencyMode on, and off), passthrough and sd-480p, against ffmpeg reading the encoder directly; median and p95',
  optIn: true,
  async run() {
    const seconds = Number(process.env.BENCH_LIVE_S ?? 60);
    const warmupS = 10;
    const mediaRoot = mkdtempSync(join(tmpdir(), 'playline-bench-live-'));
    const ports = 24000 + (process.pid % 100) * 10;
    const app = await startBenchServer(server, {
      BENCH_SERVER: 'app', PLAYLINE_MEDIA_DIR: mediaRoot, PLAYLINE_SLICER_PROVISIONER: 'ffmpeg', PLAYLINE_SLICER_PORTS: `${ports}-${ports + 9}`,
      PLAYLINE_SLICER_BIND_HOST: '127.0.0.1', PLAYLINE_PUBLIC_HOST: '127.0.0.1', PLAYLINE_REGIONS: 'eu-central-1', PLAYLINE_PLAYBACK_REFUSAL_LIMIT: '0', PLAYLINE_LOG_LEVEL: 'warn',
    });
    const children: ChildProcess[] = [];
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--autoplay-policy=no-user-gesture-required'] });
    const player = await site(page(readFileSync(new URL('../node_modules/hls.js/dist/hls.min.js', import.meta.url), 'utf8')));
    try {
      const creds = /CREDENTIALS (\S+) (\S+)/.exec(app.output());
      if (!creds?.[1] || !creds[2]) throw new Error('bench server printed no credentials');
      const [owner, key] = [creds[1], creds[2]];
      const client = new PlaylineClient({ baseUrl: app.url, owner, apiKey: key });
      const profiles = ['passthrough', 'sd-480p'] as const;
      const slicers = await Promise.all(profiles.map((p) => client.managedSlicers.create({ name: `latency ${p}`, region: 'eu-central-1', ingest_protocol: 'srt', output_profile: p })));
      const ingest: string[] = [];
      for (const s of slicers) {
        for (let i = 0; ; i++) {
          const shown = await client.managedSlicers.get(s.id);
          if (shown.live?.state === 'waiting_for_source' && shown.ingest_url) {
            ingest.push(shown.ingest_url);
            break;
          }
          if (i > 600) throw new Error(`slicer ${s.id} never waited for its source`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      const udp = await freePort();
      const direct: Array<{ at: number; latency: number }> = [];
      let encoderStart = 0;
      children.push(directReader(udp, () => encoderStart, direct));
      const outputs = [...ingest.map((u) => `[f=mpegts]${u}`), `[f=mpegts]udp://127.0.0.1:${udp}?pkt_size=1316`].join('|');
      encoderStart = Date.now();
      children.push(spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', CLOCK_PICTURE, '-f', 'lavfi', '-i', 'sine=sample_rate=48000',
        '-map', '0:v', '-map', '1:a', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-pix_fmt', 'yuv420p', '-g', String(2 * FPS), '-b:v', '800k', '-c:a', 'aac', '-b:a', '64k',
        '-f', 'tee', outputs], { stdio: 'ignore' }));

      const url = (slicerId: string) => signPlaybackUrl({ baseUrl: app.url, kind: 'event', contentId: slicerId, owner, key, expiresAt: Math.floor(Date.now() / 1000) + 3600 }, () => randomBytes(8).toString('hex'));
      // Players start once the windows hold a few segments.
      for (const s of slicers) {
        for (let i = 0; ; i++) {
          const r = await fetch(url(s.id));
          if (r.status === 200 && (await r.text()).includes('#EXT-X-STREAM-INF')) break;
          if (i > 300) throw new Error(`slicer ${s.id} never went live`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      await new Promise((r) => setTimeout(r, 6_000));
      const players: Array<{ profile: string; ll: boolean; page: Page }> = [];
      for (const [i, s] of slicers.entries()) {
        for (const ll of [true, false]) {
          const p = await browser.newPage();
          await p.goto(player.url);
          await p.evaluate(`window.start(${JSON.stringify(url(s.id))}, ${ll}, ${encoderStart})`);
          players.push({ profile: profiles[i] as string, ll, page: p });
        }
      }
      const measureFrom = Date.now() + warmupS * 1000;
      await new Promise((r) => setTimeout(r, (warmupS + seconds) * 1000));
      const within = (samples: Array<{ at: number; latency: number }>) => samples.filter((s) => s.at >= measureFrom).map((s) => s.latency / 1000);
      const baseline = within(direct);
      if (baseline.length === 0) throw new Error('the direct ffmpeg reader decoded no frame');
      const baseMedian = quantile(baseline, 0.5);
      const baseP95 = quantile(baseline, 0.95);
      const results: Comparison[] = [];
      for (const pl of players) {
        const state = (await pl.page.evaluate('({ samples: window.samples, pdt: window.pdt, errors: window.errors })')) as { samples: Array<{ at: number; latency: number }>; pdt: Array<{ at: number; latency: number }>; errors: string[] };
        const glass = within(state.samples);
        const pdt = within(state.pdt);
        const label = `${pl.profile}, hls.js lowLatencyMode ${pl.ll ? 'on (LL-HLS)' : 'off (plain HLS)'}`;
        if (glass.length === 0) {
          results.push({ name: `${label}: no frame shown (errors: ${state.errors.join(', ') || 'none'})`, unit: 's', value: NaN });
          continue;
        }
        const median = quantile(glass, 0.5);
        const target = pl.ll ? 3 : 8;
        results.push({ name: `${label}, glass-to-glass median (${glass.length} frames)`, unit: 's', value: median, baseline: { name: 'ffmpeg reading the encoder directly, median', value: baseMedian }, target: `<= ${target} s`, met: median <= target });
        results.push({ name: `${label}, glass-to-glass p95`, unit: 's', value: quantile(glass, 0.95), baseline: { name: 'ffmpeg reading the encoder directly, p95', value: baseP95 } });
        if (pdt.length > 0) results.push({ name: `${label}, now - EXT-X-PROGRAM-DATE-TIME of the playing frame (ingest clock), median`, unit: 's', value: quantile(pdt, 0.5) });
        if (state.errors.length > 0) results.push({ name: `${label}: fatal hls.js errors ${state.errors.join(', ')}`, unit: '', value: state.errors.length });
      }
      return results;
    } finally {
      for (const c of children) c.kill('SIGKILL');
      await browser.close();
      player.server.close();
      await app.stop();
      rmSync(mediaRoot, { recursive: true, force: true });
    }
  },
};
