/**
 * Media serving (DESIGN §9: ≥ 0.9 × @fastify/static): 1 MiB segments over keep-alive, 50
 * connections, through a session of the edge (token verified, file named by the manifest,
 * streamed by @fastify/send with CORS and caching headers) against @fastify/static serving the
 * same files, in the same run, rounds interleaved; and playback starts per second through the
 * edge: playback request, variant playlist and first segment, as a player starting up.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { signPlaybackUrl } from '../src/modules/playback-edge/playback-token.js';
import { assetDir } from '../src/platform/media/media-layout.js';
import { writeFakeAsset } from '../src/modules/playback-edge/testing/media-fixtures.js';
import { load, startBenchServer, type LoadResult } from './lib/http-load.js';
import type { Benchmark, Comparison } from './lib/report.js';

const server = new URL('./servers/api-server.ts', import.meta.url).pathname;
const MIB = 1024 * 1024;
const SEGMENTS = 16;
const CONNECTIONS = 50;
const ROUNDS = 3;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** The variant and media paths of a new session of `url` (as a player resolves them). */
async function sessionPaths(base: string, url: string): Promise<{ variant: string; segments: string[] }> {
  const multivariant = await (await fetch(`${base}${url}`)).text();
  const variantUri = multivariant.split('\n').find((l) => l.length > 0 && !l.startsWith('#'));
  if (!variantUri) throw new Error(`no variant in ${multivariant}`);
  const variant = new URL(variantUri, `${base}${url}`);
  const text = await (await fetch(variant)).text();
  const segments = text.split('\n').filter((l) => l.length > 0 && !l.startsWith('#')).map((l) => new URL(l, variant).pathname);
  return { variant: variant.pathname, segments };
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

export const mediaBenchmark: Benchmark = {
  name: 'media',
  description: `1 MiB segments, ${CONNECTIONS} keep-alive connections: through an edge session vs @fastify/static on the same files (median of ${ROUNDS} interleaved rounds); playback starts/s`,
  async run() {
    const mediaRoot = mkdtempSync(join(tmpdir(), 'playline-bench-media-'));
    const app = await startBenchServer(server, { BENCH_SERVER: 'app', PLAYLINE_MEDIA_DIR: mediaRoot, PLAYLINE_PLAYBACK_REFUSAL_LIMIT: '0' });
    let baseline: Awaited<ReturnType<typeof startBenchServer>> | undefined;
    try {
      const creds = /CREDENTIALS (\S+) (\S+)/.exec(app.output());
      if (!creds?.[1] || !creds[2]) throw new Error('bench server printed no credentials');
      const [owner, key] = [creds[1], creds[2]];
      const rendition = [{ name: '1080p', width: 1920, height: 1080, bandwidth: 8_000_000 }];
      await writeFakeAsset(mediaRoot, owner, 'bench-segments', { durations: Array.from({ length: SEGMENTS }, () => 4), segmentBytes: MIB, renditions: rendition });
      await writeFakeAsset(mediaRoot, owner, 'bench-starts', { durations: [4, 4, 2], renditions: rendition });
      const sign = (assetId: string) =>
        signPlaybackUrl({ baseUrl: '', kind: 'asset', contentId: assetId, owner, key, expiresAt: Math.floor(Date.now() / 1000) + 3600 }, () => randomBytes(8).toString('hex'));

      const { segments } = await sessionPaths(app.url, sign('bench-segments'));
      if (segments.length !== SEGMENTS) throw new Error(`expected ${SEGMENTS} segments, got ${segments.length}`);
      baseline = await startBenchServer(server, { BENCH_SERVER: 'static', BENCH_STATIC_ROOT: assetDir(mediaRoot, owner, 'bench-segments') });
      const staticPaths = segments.map((p) => `/${p.split('/c/')[1]}`);
      const edgeRequests = segments.map((path) => ({ path }));
      const staticRequests = staticPaths.map((path) => ({ path }));

      // Warm-up (JIT, page cache, the library's manifest cache), then interleaved rounds.
      await load({ url: app.url, requests: edgeRequests, connections: CONNECTIONS, durationS: 1 });
      await load({ url: baseline.url, requests: staticRequests, connections: CONNECTIONS, durationS: 1 });
      const edgeRuns: LoadResult[] = [];
      const edgeWarnRuns: LoadResult[] = [];
      const staticRuns: LoadResult[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        staticRuns.push(await load({ url: baseline.url, requests: staticRequests, connections: CONNECTIONS }));
        edgeRuns.push(await load({ url: app.url, requests: edgeRequests, connections: CONNECTIONS }));
        // The same at warn (no access lines), then back to the default level.
        await app.command('level', 'warn');
        edgeWarnRuns.push(await load({ url: app.url, requests: edgeRequests, connections: CONNECTIONS }));
        await app.command('level', 'info');
      }
      for (const run of [...edgeRuns, ...edgeWarnRuns, ...staticRuns]) if (run.non2xx > 0 || run.errors > 0) throw new Error(`segment load had ${run.non2xx} non-2xx answers and ${run.errors} errors`);
      await baseline.stop();
      baseline = undefined;

      const edgeRps = median(edgeRuns.map((r) => r.requestsPerSec));
      const edgeWarnRps = median(edgeWarnRuns.map((r) => r.requestsPerSec));
      const staticRps = median(staticRuns.map((r) => r.requestsPerSec));
      const edgeMiBs = median(edgeRuns.map((r) => r.bytesPerSec)) / MIB;
      const staticMiBs = median(staticRuns.map((r) => r.bytesPerSec)) / MIB;
      const starts = await playbackStarts(app.url, sign('bench-starts'), CONNECTIONS, Number(process.env.BENCH_DURATION_S ?? 5));
      if (starts.failed > 0) throw new Error(`${starts.failed} playback starts failed`);
      const results: Comparison[] = [
        { name: '1 MiB segments through an edge session, default configuration (access lines at info)', unit: 'req/s', value: edgeRps, baseline: { name: '@fastify/static, same files', value: staticRps }, target: '>= 0.9 x baseline', met: edgeRps >= 0.9 * staticRps },
        { name: 'same at warn', unit: 'req/s', value: edgeWarnRps, baseline: { name: '@fastify/static, same files', value: staticRps } },
        { name: '1 MiB segments through an edge session', unit: 'MiB/s', value: edgeMiBs, baseline: { name: '@fastify/static, same files', value: staticMiBs } },
        { name: `playback starts (playback request + variant + first segment, ${CONNECTIONS} players)`, unit: 'starts/s', value: starts.perSecond },
      ];
      return results;
    } finally {
      await baseline?.stop();
      await app.stop();
      rmSync(mediaRoot, { recursive: true, force: true });
    }
  },
};
