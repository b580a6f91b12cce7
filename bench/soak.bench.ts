import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { signV4 } from '../src/platform/auth/v4-signature.js';
import { startBenchServer } from './lib/http-load.js';
import type { Benchmark } from './lib/report.js';

const server = new URL('./servers/api-server.ts', import.meta.url).pathname;
const minutes = Number(process.env.BENCH_SOAK_MINUTES ?? 30);
const ASSETS = 1000;
const EVENTS_PER_BATCH = 500;
/** Requests per second, all kinds together (a quarter are ingest batches): a steady load, not a flood. */
const RATE = Number(process.env.BENCH_SOAK_RATE ?? 200);

/** Resident set size of a process, in bytes (Linux). */
const rssOf = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? 0) * 1024;
};

let sessionSeq = 0;
/** A batch of fresh sessions over a fixed set of assets: request, manifest, start (and an error now and then). */
const batch = (owner: string): string => {
  const lines: string[] = [];
  for (let i = 0; i < EVENTS_PER_BATCH / 3; i++) {
    const session = `s${sessionSeq++}`;
    const asset = `asset-${sessionSeq % ASSETS}`;
    lines.push(
      `{"type":"request","owner":"${owner}","asset_id":"${asset}","session_id":"${session}"}`,
      sessionSeq % 50 === 0
        ? `{"type":"error","owner":"${owner}","asset_id":"${asset}","session_id":"${session}","error_code":110,"http_status":403}`
        : `{"type":"manifest","owner":"${owner}","asset_id":"${asset}","session_id":"${session}","latency_ms":${sessionSeq % 90}}`,
      `{"type":"start","owner":"${owner}","asset_id":"${asset}","session_id":"${session}"}`,
    );
  }
  return lines.join('\n');
};

/**
 * DESIGN §9: RSS within ± 10 % over the last 15 minutes of a 30-minute steady load. Fresh
 * sessions over a fixed set of assets (ingest) mixed with statistics reads at BENCH_SOAK_RATE
 * requests/s (default 200, about 25,000 events/s), for BENCH_SOAK_MINUTES (default 30), against
 * the app as shipped (default configuration, its log to a file); RSS is sampled every 10 s and
 * printed per minute. "A plateau": every minute's RSS in the second half of the run is within
 * 10 % of the second half's mean (by then the state has reached its horizon: session dedupe
 * holds a session while its minute can still be in a window, the 3-minute window plus the
 * 5-minute late-event allowance). A shorter run (BENCH_SOAK_MINUTES=4) checks the harness.
 */
export const soakBenchmark: Benchmark = {
  name: 'soak',
  optIn: true,
  description: `RSS under ${minutes} minutes of steady load: ${RATE} req/s of ingest batches (${EVENTS_PER_BATCH} events of fresh sessions over ${ASSETS} assets) and statistics reads`,
  async run() {
    const app = await startBenchServer(server, { BENCH_SERVER: 'app' });
    const pid = app.child.pid as number;
    const creds = /CREDENTIALS (\S+) (\S+)/.exec(app.output());
    if (!creds?.[1] || !creds[2]) throw new Error('bench server printed no credentials');
    const owner = creds[1];
    const key = creds[2];
    const signed = (path: string) => {
      const { msg, sig } = signV4(owner, key, Math.floor(Date.now() / 1000));
      return `${path}${path.includes('?') ? '&' : '?'}msg=${encodeURIComponent(msg)}&sig=${sig}`;
    };
    // Every asset has statistics before the reads start (a cold single-asset read would be a 404).
    for (let i = 0; i < Math.ceil(ASSETS / (EVENTS_PER_BATCH / 3)); i++) {
      const warm = await fetch(`${app.url}${signed('/api/v4/monitoring/events')}`, { method: 'POST', body: batch(owner), headers: { 'content-type': 'application/x-ndjson' } });
      if (warm.status !== 202) throw new Error(`warm-up ingest answered ${warm.status}`);
    }
    const samples: { atS: number; rss: number }[] = [];
    const started = Date.now();
    const sampler = setInterval(() => samples.push({ atS: (Date.now() - started) / 1000, rss: rssOf(pid) }), 10_000);
    let requests = 0;
    let non2xx = 0;
    try {
      // One-minute legs, each with freshly signed paths (a signature is valid for 5 minutes).
      for (let minute = 0; minute < minutes; minute++) {
        const result = await autocannon({
          url: app.url,
          connections: 8,
          duration: 60,
          overallRate: RATE,
          requests: [
            {
              method: 'POST',
              path: signed('/api/v4/monitoring/events'),
              headers: { 'content-type': 'application/x-ndjson' },
              setupRequest: (request) => ({ ...request, body: batch(owner) }),
            },
            { method: 'GET', path: signed('/api/v4/monitoring/vod-stats?top=100') },
            { method: 'GET', path: signed(`/api/v4/monitoring/vod-stats/asset-${minute % ASSETS}`) },
            { method: 'GET', path: signed('/api/v4/monitoring/vod-stats/owner-summary') },
          ],
        });
        requests += result.requests.total;
        non2xx += result.non2xx;
        // Where the memory is: V8's heap (used of allocated), and ArrayBuffers (the store's typed arrays, Buffers) outside it.
        const memory = await app.command<NodeJS.MemoryUsage>('memory');
        const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
        process.stdout.write(
          `  minute ${minute + 1}/${minutes}: RSS ${mib(rssOf(pid))} MiB (V8 heap ${mib(memory.heapUsed)} used of ${mib(memory.heapTotal)}, array buffers ${mib(memory.arrayBuffers)}), ${Math.round(result.requests.average)} req/s\n`,
        );
      }
    } finally {
      clearInterval(sampler);
      await app.stop();
    }
    if (non2xx > 0) throw new Error(`${non2xx} of ${requests} soak requests answered non-2xx`);
    const inMinute = (m: number) => samples.filter((s) => s.atS > (m - 1) * 60 && s.atS <= m * 60).map((s) => s.rss);
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const perMinute = Array.from({ length: minutes }, (_, m) => avg(inMinute(m + 1)));
    process.stdout.write(`  RSS per minute (MiB): ${perMinute.map((r) => (r / 2 ** 20).toFixed(0)).join(' ')}\n`);
    const firstOfHalf = Math.floor(minutes / 2);
    const lastHalf = perMinute.slice(firstOfHalf);
    const mean = avg(lastHalf);
    const spread = Math.max(...lastHalf.map((r) => Math.abs(r - mean))) / mean;
    const peak = Math.max(...samples.map((s) => s.rss));
    return [
      {
        name: `RSS in minutes ${firstOfHalf + 1}-${minutes}: widest minute's distance from their mean (peak ${(peak / 2 ** 20).toFixed(1)} MiB, ${requests.toLocaleString('en-US')} requests)`,
        unit: 'MiB',
        value: (spread * mean) / 2 ** 20,
        baseline: { name: `mean RSS of minutes ${firstOfHalf + 1}-${minutes}`, value: mean / 2 ** 20 },
        target: 'ratio <= 0.1 (within ± 10 %, a plateau)',
        // A plateau needs the state's 8-minute horizon behind it and time after: shorter runs check the harness only.
        ...(minutes >= 20 ? { met: spread <= 0.1 } : {}),
      },
    ];
  },
};
