/**
 * The product as shipped, under a busy store (issue 18, DESIGN §9): one app server with the
 * default configuration (access lines at info, its log to a file) whose statistics store holds
 * ≥ 1,000,000 live session marks, next to a bare Fastify route (logs off) in the same run:
 * - signed single-asset GET at info and at warn vs the bare route (rounds interleaved);
 * - ingest of 1,000-event NDJSON batches at info and at warn vs JSON.parse of the same bytes;
 * - the single-asset GET while ingest runs at half its measured capacity: p99, with the GC pause
 *   p99 and event-loop delay p99 inside the server (and the same with ingest idle);
 * - bytes per live session mark and per active asset: the embedded store alone, heap after GC.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { systemClock } from '../src/platform/clock.js';
import { signV4 } from '../src/platform/auth/v4-signature.js';
import { parseEventColumnsSync } from '../src/modules/vod-stats/ingest/event-batch.js';
import { MemoryStatsStore } from '../src/modules/vod-stats/store/memory-stats-store.js';
import type { StoreSize } from '../src/modules/vod-stats/store/stats-store.js';
import { ingestBodies, eventsPerSecond, jsonParseLines } from './ingest.bench.js';
import { load, loadWithCpu, startBenchServer, type BenchServer, type LoadResult } from './lib/http-load.js';
import type { ProbeResult } from './lib/server-probes.js';
import type { Benchmark, Comparison } from './lib/report.js';

const server = new URL('./servers/api-server.ts', import.meta.url).pathname;
/** Live session marks the store holds before anything is measured. */
const MARKS = Number(process.env.BENCH_MARKS ?? 1_000_000);
const ASSETS = 10_000;
const LOAD_BATCH = 10_000;
const INGEST_BATCH = 1_000;
const ROUNDS = 3;

const assetId = (n: number): string => (n % ASSETS).toString(16).padStart(32, '0');

/** `count` starts of distinct sessions spread over ASSETS assets (each start leaves one session mark). */
const startEvents = (owner: string, from: number, count: number): string => {
  const lines: string[] = [];
  for (let n = from; n < from + count; n++) lines.push(`{"type":"start","owner":"${owner}","asset_id":"${assetId(n)}","session_id":"busy-${n.toString(36)}"}`);
  return `${lines.join('\n')}\n`;
};

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

interface Signed {
  owner: string;
  path(path: string): string;
}

const signer = (app: BenchServer): Signed => {
  const creds = /CREDENTIALS (\S+) (\S+)/.exec(app.output());
  if (!creds?.[1] || !creds[2]) throw new Error('bench server printed no credentials');
  const [owner, key] = [creds[1], creds[2]];
  return {
    owner,
    path: (path: string) => {
      const { msg, sig } = signV4(owner, key, Math.floor(Date.now() / 1000));
      return `${path}${path.includes('?') ? '&' : '?'}msg=${encodeURIComponent(msg)}&sig=${sig}`;
    },
  };
};

/** Fills the store with MARKS live session marks, four batches in flight. */
const fillStore = async (app: BenchServer, signed: Signed): Promise<StoreSize> => {
  let next = 0;
  const worker = async () => {
    while (next < MARKS) {
      const from = next;
      next += LOAD_BATCH;
      const response = await fetch(`${app.url}${signed.path('/api/v4/monitoring/events')}`, {
        method: 'POST',
        body: startEvents(signed.owner, from, Math.min(LOAD_BATCH, MARKS - from)),
        headers: { 'content-type': 'application/x-ndjson' },
      });
      if (response.status !== 202) throw new Error(`filling the store answered ${response.status}: ${await response.text()}`);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return app.command<StoreSize>('size');
};

/** Heap used plus ArrayBuffer memory (typed arrays' contents live outside the heap). */
const memoryInUse = (): number => {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

const collector = (): (() => void) => {
  setFlagsFromString('--expose_gc');
  return runInNewContext('gc') as () => void;
};

/** Bytes per live session mark and per active asset: the embedded store alone, heap after GC. */
const bytesPerMark = (): Comparison[] => {
  const gc = collector();
  const now = Date.now();
  const ctx = { now, owners: null, foreignOwnerCode: 'owner_mismatch' as const };
  gc();
  gc();
  const before = memoryInUse();
  const store = new MemoryStatsStore({ clock: systemClock });
  // One start per asset first: what the assets cost without their sessions.
  store.recordColumns(parseEventColumnsSync(startEvents('ws', 0, ASSETS), 'ndjson', ctx).columns, now);
  gc();
  gc();
  const withAssets = memoryInUse();
  for (let from = ASSETS; from < MARKS; from += LOAD_BATCH) {
    store.recordColumns(parseEventColumnsSync(startEvents('ws', from, Math.min(LOAD_BATCH, MARKS - from)), 'ndjson', ctx).columns, now);
  }
  gc();
  gc();
  const after = memoryInUse();
  const size = store.sizeSync();
  if (size.sessions !== MARKS) throw new Error(`the store holds ${size.sessions} marks, not ${MARKS}`);
  const perMark = (after - withAssets) / (size.sessions - ASSETS);
  const perAsset = (withAssets - before) / ASSETS - perMark;
  return [
    {
      name: `bytes per live session mark (${MARKS.toLocaleString('en-US')} marks over ${ASSETS.toLocaleString('en-US')} assets, heap + array buffers after GC)`,
      unit: 'bytes',
      value: perMark,
      baseline: { name: 'budget', value: 32 },
      target: '<= 32 bytes',
      met: perMark <= 32,
    },
    { name: 'bytes per active asset, without its marks (one start each, heap + array buffers after GC)', unit: 'bytes', value: perAsset, baseline: { name: 'budget', value: 1024 }, target: '<= 1024 bytes', met: perAsset <= 1024 },
  ];
};

export const busyStoreBenchmark: Benchmark = {
  name: 'busy-store',
  description: `default configuration (access lines at info, log to a file) with >= ${MARKS.toLocaleString('en-US')} live session marks: single-asset GET and 1,000-event ingest at info and warn vs their baselines; GET under half-capacity ingest with GC and event-loop p99; bytes per mark`,
  async run() {
    const results: Comparison[] = [];
    const bare = await startBenchServer(server, { BENCH_SERVER: 'bare' });
    const app = await startBenchServer(server, { BENCH_SERVER: 'app' });
    try {
      const signed = signer(app);
      const size = await fillStore(app, signed);
      if (size.sessions < MARKS) throw new Error(`the store holds ${size.sessions} marks after loading ${MARKS}`);
      process.stdout.write(`  store: ${size.sessions.toLocaleString('en-US')} live session marks over ${size.assets.toLocaleString('en-US')} assets; app log: ${app.logFile}\n`);
      const one = signed.path(`/api/v4/monitoring/vod-stats/${assetId(4242)}`);
      if ((await fetch(`${app.url}${one}`)).status !== 200) throw new Error('single asset GET did not answer 200');

      // (1, 2) single-asset GET: bare, info (as shipped), warn, interleaved rounds.
      const rates = { bare: [] as number[], info: [] as number[], warn: [] as number[] };
      const cpu = { bare: [] as number[], info: [] as number[], warn: [] as number[] };
      const logBefore = app.logBytes();
      let infoRequests = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const baseline = await loadWithCpu(bare, { url: `${bare.url}/bare` });
        rates.bare.push(baseline.requestsPerSec);
        cpu.bare.push(baseline.cpuUsPerRequest);
        await app.command('level', 'info');
        const info = await loadWithCpu(app, { url: `${app.url}${one}` });
        infoRequests += info.requestsPerSec * Number(process.env.BENCH_DURATION_S ?? 5);
        await app.command('level', 'warn');
        const warn = await loadWithCpu(app, { url: `${app.url}${one}` });
        if (info.non2xx + warn.non2xx > 0) throw new Error('single asset GET answered non-2xx');
        rates.info.push(info.requestsPerSec);
        rates.warn.push(warn.requestsPerSec);
        cpu.info.push(info.cpuUsPerRequest);
        cpu.warn.push(warn.cpuUsPerRequest);
      }
      await app.command('level', 'info');
      const bareRate = median(rates.bare);
      const bareBaseline = { name: `bare Fastify JSON route, logs off, median of ${ROUNDS} (interleaved)`, value: bareRate };
      const bytesPerLine = (app.logBytes() - logBefore) / Math.max(1, infoRequests);
      results.push(
        {
          name: `single-asset GET, signed, default configuration (access lines at info, ~${Math.round(bytesPerLine)} bytes each), ${(size.sessions / 1e6).toFixed(2)} M live marks, median of ${ROUNDS}`,
          unit: 'req/s',
          value: median(rates.info),
          baseline: bareBaseline,
          target: 'ratio >= 0.8',
          met: median(rates.info) >= 0.8 * bareRate,
        },
        {
          name: `same at warn, median of ${ROUNDS}`,
          unit: 'req/s',
          value: median(rates.warn),
          baseline: bareBaseline,
          target: 'ratio >= 0.9',
          met: median(rates.warn) >= 0.9 * bareRate,
        },
        {
          name: 'server CPU per single-asset GET, default configuration (steadier than req/s on a shared machine; ratio = 1 / throughput ratio)',
          unit: 'us',
          value: median(cpu.info),
          baseline: { name: 'bare route', value: median(cpu.bare) },
          target: 'bare / this >= 0.8',
          met: median(cpu.bare) >= 0.8 * median(cpu.info),
        },
        {
          name: 'server CPU per single-asset GET at warn',
          unit: 'us',
          value: median(cpu.warn),
          baseline: { name: 'bare route', value: median(cpu.bare) },
          target: 'bare / this >= 0.9',
          met: median(cpu.bare) >= 0.9 * median(cpu.warn),
        },
      );

      // (a) ingest capacity with the store full: 1,000-event batches at info and at warn vs JSON.parse.
      const bodies = ingestBodies(signed.owner, 8, INGEST_BATCH);
      const durationS = Number(process.env.BENCH_DURATION_S ?? 5);
      const ingestRequests = () => bodies.map((body) => ({ method: 'POST', path: signed.path('/api/v4/monitoring/events'), body, headers: { 'content-type': 'application/x-ndjson' } }));
      const ingest = async (level: string): Promise<LoadResult & { cpuUsPerRequest: number; systemUsPerRequest: number }> => {
        await app.command('level', level);
        const result = await loadWithCpu(app, { url: app.url, connections: 4, requests: ingestRequests() });
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`ingest answered non-2xx ${result.non2xx} times, ${result.errors} errors`);
        return result;
      };
      await load({ url: app.url, connections: 4, durationS: 2, requests: ingestRequests() }); // warm-up
      const parseBefore = eventsPerSecond(bodies, Math.min(durationS, 2), jsonParseLines);
      const ingestInfo = await ingest('info');
      const ingestWarn = await ingest('warn');
      await app.command('level', 'info');
      const jsonParse = (parseBefore + eventsPerSecond(bodies, Math.min(durationS, 2), jsonParseLines)) / 2;
      const parseBaseline = { name: 'JSON.parse of the same NDJSON lines, one thread (before and after)', value: jsonParse };
      const afterIngest = await app.command<StoreSize>('size');
      results.push(
        {
          name: `ingest, ${INGEST_BATCH.toLocaleString('en-US')}-event batches, 4 connections, default configuration, ${(Math.min(size.sessions, afterIngest.sessions) / 1e6).toFixed(2)} M+ live marks`,
          unit: 'events/s',
          value: ingestInfo.requestsPerSec * INGEST_BATCH,
          baseline: parseBaseline,
          target: 'ratio >= 0.5',
          met: ingestInfo.requestsPerSec * INGEST_BATCH >= 0.5 * jsonParse,
        },
        { name: 'same at warn', unit: 'events/s', value: ingestWarn.requestsPerSec * INGEST_BATCH, baseline: parseBaseline },
        {
          name: `server CPU per ingested event, default configuration (everything: HTTP, parse, journal, count, GC; ${(ingestInfo.systemUsPerRequest / INGEST_BATCH).toFixed(3)} us of it kernel time)`,
          unit: 'us',
          value: ingestInfo.cpuUsPerRequest / INGEST_BATCH,
          baseline: { name: 'JSON.parse per line, one thread', value: 1e6 / jsonParse },
          target: 'JSON.parse / this >= 0.5',
          met: 1e6 / jsonParse >= 0.5 * (ingestInfo.cpuUsPerRequest / INGEST_BATCH),
        },
      );

      // (b, c) single-asset GET with ingest idle, then while ingest runs at half its capacity.
      await app.command('probe-start');
      const idle = await load({ url: `${app.url}${one}` });
      const idleProbe = await app.command<ProbeResult>('probe-stop');
      const halfRate = Math.max(1, Math.round(ingestInfo.requestsPerSec / 2));
      await app.command('probe-start');
      const [busy, background] = await Promise.all([
        load({ url: `${app.url}${one}` }),
        load({ url: app.url, connections: 4, overallRate: halfRate, requests: ingestRequests() }),
      ]);
      const busyProbe = await app.command<ProbeResult>('probe-stop');
      if (busy.non2xx + background.non2xx + idle.non2xx > 0) throw new Error('a load answered non-2xx');
      results.push(
        {
          name: `single-asset GET p99 while ingest runs at half capacity (${Math.round(background.requestsPerSec * INGEST_BATCH).toLocaleString('en-US')} events/s; ${Math.round(busy.requestsPerSec).toLocaleString('en-US')} req/s, p50 ${busy.p50Ms} ms)`,
          unit: 'ms',
          value: busy.p99Ms,
          baseline: { name: `ingest idle (${Math.round(idle.requestsPerSec).toLocaleString('en-US')} req/s)`, value: idle.p99Ms },
          target: '<= 10 ms',
          met: busy.p99Ms <= 10,
        },
        {
          name: `GC pause p99 in the server during those reads (${busyProbe.gcPauses} pauses: ${busyProbe.minorPauses} scavenges p99 ${busyProbe.minorP99Ms.toFixed(1)} ms, ${busyProbe.majorPauses} mark-compacts p99 ${busyProbe.majorP99Ms.toFixed(1)} ms; max ${busyProbe.gcMaxMs.toFixed(1)} ms, ${((busyProbe.gcTotalMs / 1000 / busyProbe.seconds) * 100).toFixed(1)} % of the time)`,
          unit: 'ms',
          value: busyProbe.gcP99Ms,
          baseline: { name: `ingest idle (${idleProbe.minorPauses} scavenges p99 ${idleProbe.minorP99Ms.toFixed(1)} ms, ${idleProbe.majorPauses} mark-compacts p99 ${idleProbe.majorP99Ms.toFixed(1)} ms)`, value: idleProbe.gcP99Ms },
          target: '<= 5 ms',
          met: busyProbe.gcP99Ms <= 5,
        },
        {
          name: `event-loop delay p99 in the server during those reads (max ${busyProbe.eventLoopDelayMaxMs.toFixed(1)} ms)`,
          unit: 'ms',
          value: busyProbe.eventLoopDelayP99Ms,
          baseline: { name: 'ingest idle', value: idleProbe.eventLoopDelayP99Ms },
        },
      );
    } finally {
      await app.stop();
      await bare.stop();
    }
    // (d) in this process, after the servers are gone.
    results.push(...bytesPerMark());
    return results;
  },
};
