/**
 * Target PATCH throughput and latency on SQLite (DESIGN §9: >= 10,000 req/s, p99 <= 10 ms),
 * next to a bare Fastify JSON PATCH route in the same run. Each PATCH changes the password,
 * so every request opens, merges, validates, seals and writes the target.
 * Run alone: `npx tsx bench/syndication.bench.ts`; or register `syndicationBenchmark` in run.ts.
 */
import { fileURLToPath } from 'node:url';
import { signV4 } from '../src/platform/auth/v4-signature.js';
import { load, startBenchServer } from './lib/http-load.js';
import { printComparison, type Benchmark, type Comparison } from './lib/report.js';

const server = fileURLToPath(new URL('./servers/api-server.ts', import.meta.url));
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);

const patches = (path: string) =>
  ['rotated-a', 'rotated-b'].map((password) => ({
    method: 'PATCH',
    path,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ platform: 'Pluto TV', target_protocol: 'zixi', description: 'bench', platform_config: { password } }),
  }));

export const syndicationBenchmark: Benchmark = {
  name: 'syndication',
  description: `signed PATCH /api/v4/syndication-target/<id> on SQLite vs a bare Fastify JSON PATCH route (${connections} connections)`,
  async run() {
    const bare = await startBenchServer(server, { BENCH_SERVER: 'bare' });
    const baseline = await load({ url: bare.url, requests: patches('/bare/abc'), connections });
    await bare.stop();

    const comparisons: Comparison[] = [];
    const variants: { name: string; env: Record<string, string> }[] = [
      { name: 'target PATCH', env: {} },
    ];
    for (const variant of variants) {
      const app = await startBenchServer(server, { BENCH_SERVER: 'app', BENCH_TARGET: '1', ...variant.env });
      const creds = /CREDENTIALS (\S+) (\S+)/.exec(app.output());
      const target = /TARGET (\S+)/.exec(app.output())?.[1];
      if (!creds?.[1] || !creds[2] || !target) throw new Error('bench server printed no credentials or target');
      const { msg, sig } = signV4(creds[1], creds[2], Math.floor(Date.now() / 1000));
      const path = `/api/v4/syndication-target/${target}?msg=${encodeURIComponent(msg)}&sig=${sig}`;
      const result = await load({ url: app.url, requests: patches(path), connections });
      await app.command('level', 'warn');
      const atWarn = await load({ url: app.url, requests: patches(path), connections });
      await app.stop();
      if (result.non2xx + atWarn.non2xx > 0 || result.errors + atWarn.errors > 0) throw new Error(`PATCH answered non-2xx ${result.non2xx + atWarn.non2xx} times, ${result.errors + atWarn.errors} errors`);
      const bare = { name: 'bare Fastify JSON PATCH' };
      comparisons.push(
        {
          name: `${variant.name} throughput`,
          unit: 'req/s',
          value: result.requestsPerSec,
          baseline: { ...bare, value: baseline.requestsPerSec },
          target: '>= 10,000 req/s',
          met: result.requestsPerSec >= 10_000,
        },
        { name: `${variant.name} p99 latency`, unit: 'ms', value: result.p99Ms, baseline: { ...bare, value: baseline.p99Ms }, target: '<= 10 ms', met: result.p99Ms <= 10 },
        { name: `${variant.name} p50 latency`, unit: 'ms', value: result.p50Ms },
        { name: `${variant.name} throughput at warn (default configuration above: access lines at info)`, unit: 'req/s', value: atWarn.requestsPerSec, baseline: { ...bare, value: baseline.requestsPerSec } },
      );
    }
    return comparisons;
  },
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const comparison of await syndicationBenchmark.run()) printComparison(comparison);
}
