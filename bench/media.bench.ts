/**
 * Media serving (DESIGN §9, issue 29): 1080p-sized segments (2.6 MB) and variant playlists over
 * keep-alive connections with `wrk`, at 50 and 200 connections, against nginx alone (sendfile on)
 * serving the same files in the same run:
 * - in-process: Playline as `playline serve` runs it (default configuration, access lines at info),
 *   every segment through a playback session (token checked, statistics counted, bytes sent by Node);
 * - behind the front: the same, with PLAYLINE_MEDIA_ACCEL_PREFIX, behind the documented nginx front
 *   (deploy/nginx/playline.conf), which sends the segments after Playline answers X-Accel-Redirect.
 * Per load (median of 3 interleaved rounds): requests/s, MB/s and CPU per request (the server's; for the front,
 * Playline's and nginx's together, and Playline's alone). Then
 * playback starts per second through the edge (playback request, variant playlist, first segment).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { signPlaybackUrl } from '../src/modules/playback-edge/playback-token.js';
import { assetDir } from '../src/platform/media/media-layout.js';
import { writeFakeAsset } from '../src/modules/playback-edge/testing/media-fixtures.js';
import { frontServerBlock, nginxSkip, startNginx, type RunningNginx } from '../test/helpers/nginx.js';
import { startBenchServer, type BenchServer } from './lib/http-load.js';
import { processTreeCpuUs, wrk, wrkMissing } from './lib/wrk.js';
import type { Benchmark, Comparison } from './lib/report.js';

const server = new URL('./servers/api-server.ts', import.meta.url).pathname;
/** A 1080p segment of 4 s at about 5.2 Mb/s. */
const SEGMENT_BYTES = 2_600_000;
/** A two-minute asset: 30 segments of 4 s (78 MB, held in the page cache like any hot asset). */
const SEGMENTS = 30;
const CONNECTIONS = [50, 200];
const ACCEL_PREFIX = '/_playline_media/';
/** Rounds of every load, interleaved (nginx alone, in-process, front, then again): the median is reported, as the machine is shared. */
const ROUNDS = 3;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** The variant and media paths of a new session of `url` (as a player resolves them). */
async function sessionPaths(base: string, url: string): Promise<{ variant: string; variantText: string; segments: string[] }> {
  const multivariant = await (await fetch(`${base}${url}`)).text();
  const variantUri = multivariant.split('\n').find((l) => l.length > 0 && !l.startsWith('#'));
  if (!variantUri) throw new Error(`no variant in ${multivariant}`);
  const variant = new URL(variantUri, `${base}${url}`);
  const variantText = await (await fetch(variant)).text();
  const segments = variantText.split('\n').filter((l) => l.length > 0 && !l.startsWith('#')).map((l) => new URL(l, variant).pathname);
  return { variant: variant.pathname, variantText, segments };
}

/** Players starting up, `concurrency` at a time for `durationS`: playback request, variant playlist, first segment. */
async function playbackStarts(base: string, url: string, concurrency: number, durationS: number): Promise<{ perSecond: number; failed: number }> {
  const pool = new Pool(base, { connections: concurrency, pipelining: 1 });
  const get = async (path: string) => {
    const response = await pool.request({ method: 'GET', path });
    const body = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode}`);
    return body;
  };
  let starts = 0;
  let failed = 0;
  const until = Date.now() + durationS * 1000;
  const player = async () => {
    while (Date.now() < until) {
      try {
        const multivariant = await get(url);
        const variantUri = multivariant.split('\n').find((l) => l.length > 0 && !l.startsWith('#')) as string;
        const variant = new URL(variantUri, `http://edge${url}`);
        const media = (await get(variant.pathname)).split('\n').find((l) => l.length > 0 && !l.startsWith('#')) as string;
        await get(new URL(media, variant).pathname);
        starts += 1;
      } catch {
        failed += 1;
      }
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, player));
  const elapsedS = (Date.now() - started) / 1000;
  await pool.close();
  return { perSecond: starts / elapsedS, failed };
}

interface Target {
  name: string;
  url: string;
  segments: string[];
  playlist: string;
  /** CPU used so far by everything that serves this target, µs. */
  cpuUs(): Promise<number>;
  /** Behind the front: Playline's share of it alone. */
  playlineCpuUs?: () => Promise<number>;
}

interface Measured {
  rps: number;
  mbps: number;
  cpuMsPerRequest: number;
  playlineCpuMsPerRequest?: number;
}

async function measure(target: Target, paths: string[], connections: number, durationS: number): Promise<Measured> {
  const before = await target.cpuUs();
  const playlineBefore = await target.playlineCpuUs?.();
  const result = await wrk({ url: target.url, paths, connections, durationS });
  const after = await target.cpuUs();
  const playlineAfter = await target.playlineCpuUs?.();
  if (result.non2xx > 0 || result.socketErrors > 0) throw new Error(`${target.name}: ${result.non2xx} non-2xx answers and ${result.socketErrors} socket errors (${result.errorDetail})`);
  const perRequest = (us: number) => us / 1000 / Math.max(1, result.requests);
  return {
    rps: result.requestsPerSec,
    mbps: result.bytesPerSec / 1e6,
    cpuMsPerRequest: perRequest(after - before),
    ...(playlineBefore !== undefined && playlineAfter !== undefined ? { playlineCpuMsPerRequest: perRequest(playlineAfter - playlineBefore) } : {}),
  };
}

export const mediaBenchmark: Benchmark = {
  name: 'media',
  description: `${SEGMENT_BYTES / 1e6} MB segments and variant playlists with wrk, keep-alive, ${CONNECTIONS.join(' and ')} connections: Playline in-process and behind the nginx front (X-Accel-Redirect) against nginx alone (sendfile) on the same files; playback starts/s`,
  async run() {
    const missing = wrkMissing() || nginxSkip();
    if (missing) throw new Error(`the media benchmark needs wrk and nginx: ${missing}`);
    const durationS = Number(process.env.BENCH_DURATION_S ?? 5);
    const mediaRoot = mkdtempSync(join(tmpdir(), 'playline-bench-media-'));
    const staticRoot = mkdtempSync(join(tmpdir(), 'playline-bench-static-'));
    const started: Array<BenchServer | RunningNginx> = [];
    try {
      const [app, fronted] = await Promise.all([
        startBenchServer(server, { BENCH_SERVER: 'app', PLAYLINE_MEDIA_DIR: mediaRoot, PLAYLINE_PLAYBACK_REFUSAL_LIMIT: '0' }),
        // The documented deployment: the front's address trusted, connections capped at the front.
        startBenchServer(server, {
          BENCH_SERVER: 'app',
          PLAYLINE_MEDIA_DIR: mediaRoot,
          PLAYLINE_PLAYBACK_REFUSAL_LIMIT: '0',
          PLAYLINE_MEDIA_ACCEL_PREFIX: ACCEL_PREFIX,
          PLAYLINE_TRUSTED_PROXIES: '127.0.0.1',
          PLAYLINE_MAX_CONNECTIONS_PER_ADDRESS: '0',
        }),
      ]);
      started.push(app, fronted);
      const credentials = (s: BenchServer) => {
        const creds = /CREDENTIALS (\S+) (\S+)/.exec(s.output());
        if (!creds?.[1] || !creds[2]) throw new Error('bench server printed no credentials');
        return { owner: creds[1], key: creds[2] };
      };
      const rendition = [{ name: '1080p', width: 1920, height: 1080, bandwidth: 6_000_000 }];
      const durations = Array.from({ length: SEGMENTS }, () => 4);
      const sign = (c: { owner: string; key: string }, assetId: string) =>
        signPlaybackUrl({ baseUrl: '', kind: 'asset', contentId: assetId, owner: c.owner, key: c.key, expiresAt: Math.floor(Date.now() / 1000) + 3600 }, () => randomBytes(8).toString('hex'));
      const [appCreds, frontCreds] = [credentials(app), credentials(fronted)];
      for (const c of [appCreds, frontCreds]) {
        await writeFakeAsset(mediaRoot, c.owner, 'bench-segments', { durations, segmentBytes: SEGMENT_BYTES, renditions: rendition });
        await writeFakeAsset(mediaRoot, c.owner, 'bench-starts', { durations: [4, 4, 2], renditions: rendition });
      }
      const workers = availableParallelism();
      const front = await startNginx(frontServerBlock({ upstreamPort: Number(new URL(fronted.url).port), mediaRoot }), { workers });
      started.push(front);
      const inProcess = await sessionPaths(app.url, sign(appCreds, 'bench-segments'));
      const behind = await sessionPaths(front.url, sign(frontCreds, 'bench-segments'));
      if (inProcess.segments.length !== SEGMENTS || behind.segments.length !== SEGMENTS) throw new Error(`expected ${SEGMENTS} segments`);

      // nginx alone: the same segment files, and the variant playlist Playline answered as a file.
      mkdirSync(join(staticRoot, 'v'));
      writeFileSync(join(staticRoot, 'v', 'variant.m3u8'), inProcess.variantText);
      const segmentsDir = assetDir(mediaRoot, appCreds.owner, 'bench-segments');
      const alone = await startNginx(
        (port) => `server {
    listen 127.0.0.1:${port};
    sendfile on;
    tcp_nopush on;
    location /c/ { alias ${segmentsDir}/; types { } default_type video/mp4; }
    location /v/ { alias ${staticRoot}/v/; types { } default_type application/vnd.apple.mpegurl; }
  }`,
        { workers },
      );
      started.push(alone);

      const targets: Target[] = [
        { name: 'nginx alone', url: alone.url, segments: inProcess.segments.map((p) => `/c/${p.split('/c/')[1] as string}`), playlist: '/v/variant.m3u8', cpuUs: async () => processTreeCpuUs(alone.child.pid as number) },
        { name: 'Playline in-process', url: app.url, segments: inProcess.segments, playlist: inProcess.variant, cpuUs: () => app.command<number>('cpu') },
        {
          name: 'Playline behind the nginx front',
          url: front.url,
          segments: behind.segments,
          playlist: behind.variant,
          cpuUs: async () => (await fronted.command<number>('cpu')) + processTreeCpuUs(front.child.pid as number),
          playlineCpuUs: () => fronted.command<number>('cpu'),
        },
      ];
      // Warm-up: JIT, page cache, the library's manifest cache, upstream keep-alive.
      for (const t of targets) {
        await wrk({ url: t.url, paths: t.segments, connections: 50, durationS: 1 });
        await wrk({ url: t.url, paths: [t.playlist], connections: 50, durationS: 1 });
      }
      const results: Comparison[] = [];
      for (const kind of ['segments', 'playlists'] as const) {
        for (const connections of CONNECTIONS) {
          const rounds = new Map<string, Measured[]>(targets.map((t) => [t.name, []]));
          for (let round = 0; round < ROUNDS; round++) {
            for (const t of targets) rounds.get(t.name)?.push(await measure(t, kind === 'segments' ? t.segments : [t.playlist], connections, durationS));
          }
          // The round with the median rate stands for each target (its MB/s and CPU with it).
          const figures = new Map<string, Measured>();
          for (const [name, runs] of rounds) {
            const mid = median(runs.map((r) => r.rps));
            figures.set(name, runs.find((r) => r.rps === mid) as Measured);
          }
          const base = figures.get('nginx alone') as Measured;
          const label = `${kind === 'segments' ? `${SEGMENT_BYTES / 1e6} MB segments` : 'variant playlists'}, ${connections} connections`;
          results.push({ name: `nginx alone: ${label}`, unit: 'req/s', value: base.rps });
          results.push({ name: `nginx alone: ${label}`, unit: 'MB/s', value: base.mbps });
          results.push({ name: `nginx alone: ${label}`, unit: 'ms CPU/req', value: base.cpuMsPerRequest });
          for (const t of targets.slice(1)) {
            const f = figures.get(t.name) as Measured;
            const target = t.name.includes('front') ? (kind === 'segments' ? 0.9 : undefined) : 0.5;
            results.push({
              name: `${t.name}: ${label}`,
              unit: 'req/s',
              value: f.rps,
              baseline: { name: 'nginx alone', value: base.rps },
              ...(target !== undefined ? { target: `>= ${target} x nginx alone`, met: f.rps >= target * base.rps } : {}),
            });
            results.push({ name: `${t.name}: ${label}`, unit: 'MB/s', value: f.mbps, baseline: { name: 'nginx alone', value: base.mbps } });
            results.push({ name: `${t.name}: ${label}`, unit: 'ms CPU/req', value: f.cpuMsPerRequest, baseline: { name: 'nginx alone', value: base.cpuMsPerRequest } });
            if (f.playlineCpuMsPerRequest !== undefined) results.push({ name: `${t.name}: ${label}, Playline's share`, unit: 'ms CPU/req', value: f.playlineCpuMsPerRequest });
          }
        }
      }
      const starts = await playbackStarts(app.url, sign(appCreds, 'bench-starts'), 50, durationS);
      if (starts.failed > 0) throw new Error(`${starts.failed} playback starts failed`);
      results.push({ name: 'playback starts, in-process (playback request + variant + first segment, 50 players)', unit: 'starts/s', value: starts.perSecond });
      return results;
    } finally {
      for (const s of started.reverse()) await s.stop();
      rmSync(mediaRoot, { recursive: true, force: true });
      rmSync(staticRoot, { recursive: true, force: true });
    }
  },
};
