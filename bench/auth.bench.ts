import { signV4 } from '../src/platform/auth/v4-signature.js';
import { load } from './lib/http-load.js';
import { startBenchServer } from './lib/http-load.js';
import type { Benchmark, Comparison } from './lib/report.js';

const server = new URL('./servers/api-server.ts', import.meta.url).pathname;

/** Prices the auth path: a signed trivial GET (as shipped, and at warn) against a bare Fastify JSON route. */
export const authBenchmark: Benchmark = {
  name: 'auth',
  description: 'signed GET /api/v4/workspace vs a bare Fastify JSON route',
  async run() {
    const bare = await startBenchServer(server, { BENCH_SERVER: 'bare' });
    const baseline = await load({ url: `${bare.url}/bare` });
    await bare.stop();

    const results: Comparison[] = [];
    const variants: { name: string; env: Record<string, string> }[] = [
      { name: 'signed GET, repeated signature (verified-pair cache)', env: {} },
      { name: 'signed GET, full verification every request', env: { BENCH_NO_AUTH_CACHE: '1' } },
    ];
    for (const variant of variants) {
      const app = await startBenchServer(server, { BENCH_SERVER: 'app', ...variant.env });
      const creds = /CREDENTIALS (\S+) (\S+)/.exec(app.output());
      if (!creds?.[1] || !creds[2]) throw new Error('bench server printed no credentials');
      const { msg, sig } = signV4(creds[1], creds[2], Math.floor(Date.now() / 1000));
      const url = `${app.url}/api/v4/workspace?msg=${encodeURIComponent(msg)}&sig=${sig}`;
      const result = await load({ url });
      await app.command('level', 'warn');
      const atWarn = await load({ url });
      await app.stop();
      if (result.non2xx + atWarn.non2xx > 0) throw new Error(`signed GET answered non-2xx ${result.non2xx + atWarn.non2xx} times`);
      results.push(
        { name: `${variant.name}, default configuration (access lines at info)`, unit: 'req/s', value: result.requestsPerSec, baseline: { name: 'bare Fastify JSON route, logs off', value: baseline.requestsPerSec } },
        { name: `${variant.name}, at warn`, unit: 'req/s', value: atWarn.requestsPerSec, baseline: { name: 'bare Fastify JSON route, logs off', value: baseline.requestsPerSec } },
      );
    }
    return results;
  },
};
