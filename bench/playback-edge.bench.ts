/**
 * The playback edge: valid playbacks/s (check + library lookup + session token + multivariant
 * playlist + request event into the journaled statistics) against a bare Fastify route
 * answering a multivariant playlist of the same size.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlaylineClient } from '../src/client/index.js';
import { signPlaybackUrl } from '../src/modules/playback-edge/playback-token.js';
import { writeFakeAsset } from '../src/modules/playback-edge/testing/media-fixtures.js';
import { BENCH_DURATIONS } from './playback-edge.fixtures.js';
import { load, startBenchServer } from './lib/http-load.js';
import type { Benchmark, Comparison } from './lib/report.js';

const server = new URL('./servers/api-server.ts', import.meta.url).pathname;
const ASSET = 'bench-asset';
/** Distinct signed URLs the load cycles through (all valid, none single-use). */
const URLS = 64;

export const playbackEdgeBenchmark: Benchmark = {
  name: 'playback-edge',
  description: 'valid GET /play/<asset>.m3u8 (signed URL checked, packaged asset looked up, session token signed, multivariant playlist, request event journaled) vs a bare Fastify route answering a playlist of the same size',
  async run() {
    const bare = await startBenchServer(server, { BENCH_SERVER: 'bare', BENCH_BARE_PLAYLIST: ASSET });
    await load({ url: `${bare.url}/bare`, durationS: 1 });
    const baseline = await load({ url: `${bare.url}/bare` });
    await bare.stop();

    // The refused variant measures a refusal's full cost (events, report): no refused-playback limit.
    const mediaRoot = mkdtempSync(join(tmpdir(), 'playline-bench-media-'));
    const app = await startBenchServer(server, { BENCH_SERVER: 'app', PLAYLINE_PLAYBACK_REFUSAL_LIMIT: '0', PLAYLINE_MEDIA_DIR: mediaRoot });
    const creds = /CREDENTIALS (\S+) (\S+)/.exec(app.output());
    if (!creds?.[1] || !creds[2]) throw new Error('bench server printed no credentials');
    const [owner, key] = [creds[1], creds[2]];
    await writeFakeAsset(mediaRoot, owner, ASSET, { durations: BENCH_DURATIONS });
    await writeFakeAsset(mediaRoot, owner, 'bench-ad', { durations: [4] });
    await new PlaylineClient({ baseUrl: app.url, owner, apiKey: key }).playback.putAdConfig('bench-ads', {
      ad_server_url: 'https://ads.example.com/vast', ad_asset_ids: ['bench-ad'], simulated_latency_ms: 0, timeout_ms: 1000,
    });
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    const urls = (params: Array<[string, string]>, sign: string) =>
      Array.from({ length: URLS }, () => ({
        path: signPlaybackUrl({ baseUrl: '', kind: 'asset', contentId: ASSET, owner, key: sign, expiresAt, params }, () => randomBytes(8).toString('hex')),
      }));
    const results: Comparison[] = [];
    const variants = [
      { name: 'valid playback', requests: urls([], key), ok: true },
      { name: 'valid playback with ad decision (simulated, 0 ms)', requests: urls([['ad', 'bench-ads']], key), ok: true },
      { name: 'refused playback (bad signature: error event + report)', requests: urls([], `${key}-wrong`), ok: false },
    ];
    try {
      // A second of warm-up (JIT, key and catalogue caches, journal file) so the first variant is not penalised.
      await load({ url: app.url, requests: variants[0]?.requests ?? [], durationS: 1 });
      for (const variant of variants) {
        const result = await load({ url: app.url, requests: variant.requests });
        if (variant.ok && result.non2xx > 0) throw new Error(`${variant.name}: ${result.non2xx} answers were not 200`);
        results.push({ name: `${variant.name}, default configuration (access lines at info)`, unit: 'req/s', value: result.requestsPerSec, baseline: { name: 'bare Fastify route, same playlist, logs off', value: baseline.requestsPerSec } });
      }
      await app.command('level', 'warn');
      const atWarn = await load({ url: app.url, requests: variants[0]?.requests ?? [] });
      if (atWarn.non2xx > 0) throw new Error(`valid playback at warn: ${atWarn.non2xx} answers were not 200`);
      results.push({ name: 'valid playback, at warn', unit: 'req/s', value: atWarn.requestsPerSec, baseline: { name: 'bare Fastify route, same playlist, logs off', value: baseline.requestsPerSec } });
    } finally {
      await app.stop();
      rmSync(mediaRoot, { recursive: true, force: true });
    }
    return results;
  },
};
