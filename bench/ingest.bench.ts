/**
 * Ingest: NDJSON batches of 1,000 events POSTed to the real app as shipped (default
 * configuration: access lines at info, log to a file; journaled with fsync, counted), and the
 * same at warn, vs plain JSON.parse of the same bytes in one thread, the baseline from the same
 * run (DESIGN §9: >= 1,000,000 events/s and >= 50 % of JSON.parse). The same with a store
 * holding a million live session marks: bench/busy-store.bench.ts.
 */
import { signV4 } from '../src/platform/auth/v4-signature.js';
import { parseEventColumnsSync } from '../src/modules/vod-stats/ingest/event-batch.js';
import { AllowedOwners } from '../src/modules/vod-stats/ingest/event-fields.js';
import { systemClock } from '../src/platform/clock.js';
import { encodeRecord } from '../src/modules/vod-stats/journal/journal-record.js';
import { MemoryStatsStore } from '../src/modules/vod-stats/store/memory-stats-store.js';
import type { EventColumns } from '../src/modules/vod-stats/event-columns.js';
import { load, loadWithCpu, startBenchServer } from './lib/http-load.js';
import type { Benchmark, Comparison } from './lib/report.js';

const server = new URL('./servers/api-server.ts', import.meta.url).pathname;
const EVENTS_PER_BATCH = 1_000;
const BODIES = 8;
/** One playback session's events, in order; one session in ten fails instead of its second request. */
const SESSION = ['request', 'manifest', 'start', 'ad', 'request', 'request'] as const;

/**
 * Realistic batches: 32-hex asset ids (10,000 assets), each session's six events on one asset,
 * latencies on manifest and ad, an error in one session of ten, no ts (receipt time).
 */
export const ingestBodies = (owner: string, bodies = BODIES, perBatch = EVENTS_PER_BATCH): string[] =>
  Array.from({ length: bodies }, (_, b) => {
    const lines: string[] = [];
    for (let i = 0; i < perBatch; i++) {
      const n = b * perBatch + i;
      const session = Math.floor(n / SESSION.length);
      const step = n % SESSION.length;
      const type = step === 5 && session % 10 === 0 ? 'error' : (SESSION[step] as (typeof SESSION)[number]);
      const event: Record<string, unknown> = {
        type,
        owner,
        asset_id: (session % 10_000).toString(16).padStart(32, '0'),
        session_id: `${session.toString(16).padStart(16, '0')}-sess`,
      };
      if (type === 'manifest' || type === 'ad') event.latency_ms = 20 + (n % 300) / 4;
      if (type === 'error') event.error_code = 103 + (session % 3);
      lines.push(JSON.stringify(event));
    }
    return `${lines.join('\n')}\n`;
  });

/** Events/s of `fn` over the bodies, repeated for about `seconds` (one thread). */
export const eventsPerSecond = (bodies: string[], seconds: number, fn: (body: string) => void): number => {
  const lineCount = bodies.reduce((n, b) => n + b.split('\n').length - 1, 0);
  for (const body of bodies) fn(body); // warm up
  const started = process.hrtime.bigint();
  let rounds = 0;
  let elapsed: number;
  do {
    for (const body of bodies) fn(body);
    rounds++;
    elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  } while (elapsed < seconds);
  return (rounds * lineCount) / elapsed;
};

export const jsonParseLines = (body: string): void => {
  for (const line of body.split('\n')) if (line !== '') JSON.parse(line);
};

/** µs per event of `fn` over the bodies, one thread. */
const usPerEvent = (bodies: string[], fn: (body: string, i: number) => void): number => {
  const seconds = Math.min(Number(process.env.BENCH_DURATION_S ?? 5), 2);
  let i = 0;
  return 1e6 / eventsPerSecond(bodies, seconds, (body) => fn(body, i++));
};

/**
 * Where the server's CPU per ingested event goes: each stage of the pipeline timed alone in this
 * process on the same batches, and the rest (HTTP, body, response, GC, fsync, access line)
 * as the server's measured CPU per event minus those stages.
 */
const whereTheTimeGoes = (bodies: string[], owner: string, serverUs: number, systemUs: number, jsonParseUs: number): Comparison[] => {
  const buffers = bodies.map((b) => Buffer.from(b));
  const ctx = () => ({ now: Date.now(), owners: new AllowedOwners(new Set([owner])), foreignOwnerCode: 'owner_mismatch' as const });
  // From the bytes, as the server parses: common lines scanned in place, the rest decoded and JSON.parse'd.
  const parse = usPerEvent(bodies, (_b, i) => parseEventColumnsSync(buffers[i % buffers.length] as Buffer, 'ndjson', ctx()));
  const journal = usPerEvent(bodies, (_b, i) => encodeRecord({ seq: i, receivedAt: Date.now(), kind: 'ndjson', authOwner: owner, owners: [owner], body: buffers[i % buffers.length] as Buffer }));
  const parsed = buffers.map((body) => parseEventColumnsSync(body, 'ndjson', ctx()).columns);
  const store = new MemoryStatsStore({ clock: systemClock });
  const count = usPerEvent(bodies, (_b, i) => store.recordColumns(parsed[i % parsed.length] as EventColumns, Date.now()));
  const stages = parse + journal + count;
  const row = (name: string, us: number): Comparison => ({ name: `  ${name}`, unit: 'us/event', value: us, baseline: { name: 'server CPU per event', value: serverUs } });
  return [
    { name: 'where the server CPU per ingested event goes (default configuration, empty store)', unit: 'us/event', value: serverUs, baseline: { name: 'JSON.parse per line', value: jsonParseUs } },
    row(`parse + validate from the body's bytes (scanned in place; lines of another shape decoded and JSON.parse'd) (JSON.parse alone: ${jsonParseUs.toFixed(3)})`, parse),
    row('journal record (header, CRC32)', journal),
    row('counting (memory store)', count),
    row(`the rest: HTTP, auth, body buffering, response, access line, fsync, GC (of the server's CPU, ${systemUs.toFixed(3)} us/event is kernel time: sockets, fsync)`, Math.max(0, serverUs - stages)),
  ];
};

export const ingestBenchmark: Benchmark = {
  name: 'ingest',
  description: `NDJSON batches of ${EVENTS_PER_BATCH} events over HTTP (journal fsync + counting) vs JSON.parse of the same bytes`,
  async run() {
    const durationS = Number(process.env.BENCH_DURATION_S ?? 5);
    const app = await startBenchServer(server, { BENCH_SERVER: 'app' });
    try {
      const creds = /CREDENTIALS (\S+) (\S+)/.exec(app.output());
      if (!creds?.[1] || !creds[2]) throw new Error('bench server printed no credentials');
      const owner = creds[1];
      const bodies = ingestBodies(owner);
      const { msg, sig } = signV4(owner, creds[2], Math.floor(Date.now() / 1000));
      const path = `/api/v4/monitoring/events?msg=${encodeURIComponent(msg)}&sig=${sig}`;
      const probe = await fetch(`${app.url}${path}`, { method: 'POST', body: bodies[0], headers: { 'content-type': 'application/x-ndjson' } });
      const answer = (await probe.json()) as { accepted?: number };
      if (probe.status !== 202 || answer.accepted !== EVENTS_PER_BATCH) throw new Error(`ingest probe answered ${probe.status} ${JSON.stringify(answer).slice(0, 200)}`);

      // Two seconds of warm-up (JIT, journal file), so the first measured level is not penalised.
      await load({ url: app.url, connections: 4, durationS: 2, requests: bodies.map((body) => ({ method: 'POST', path, body, headers: { 'content-type': 'application/x-ndjson' } })) });
      // Baseline before and after the load, averaged, so drift on a shared machine hits both alike.
      const parseBefore = eventsPerSecond(bodies, Math.min(durationS, 2), jsonParseLines);
      const ingest = async (level: string) => {
        await app.command('level', level);
        const result = await loadWithCpu(app, {
          url: app.url,
          connections: 4,
          durationS,
          requests: bodies.map((body) => ({ method: 'POST', path, body, headers: { 'content-type': 'application/x-ndjson' } })),
        });
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`ingest answered non-2xx ${result.non2xx} times, ${result.errors} errors`);
        return result;
      };
      const result = await ingest('info');
      const atWarn = await ingest('warn');
      const overHttp = result.requestsPerSec * EVENTS_PER_BATCH;
      const jsonParse = (parseBefore + eventsPerSecond(bodies, Math.min(durationS, 2), jsonParseLines)) / 2;
      const ctx = { now: Date.now(), owners: new AllowedOwners(new Set([owner])), foreignOwnerCode: 'owner_mismatch' as const };
      const buffers = bodies.map((body) => Buffer.from(body));
      let next = 0;
      const parser = eventsPerSecond(bodies, Math.min(durationS, 2), () => parseEventColumnsSync(buffers[next++ % buffers.length] as Buffer, 'ndjson', ctx));
      const results: Comparison[] = [
        {
          name: `ingest over HTTP (parse + journal fsync + count), ${EVENTS_PER_BATCH.toLocaleString('en-US')}-event batches, 4 connections, default configuration (empty store)`,
          unit: 'events/s',
          value: overHttp,
          baseline: { name: 'JSON.parse of the same NDJSON lines, one thread', value: jsonParse },
          target: '>= 1,000,000 events/s and ratio >= 0.5',
          met: overHttp >= 1_000_000 && overHttp >= 0.5 * jsonParse,
        },
        { name: 'same at warn', unit: 'events/s', value: atWarn.requestsPerSec * EVENTS_PER_BATCH, baseline: { name: 'JSON.parse of the same NDJSON lines, one thread', value: jsonParse } },
        {
          name: 'batch parser alone (parse + validate from the bytes, as the server does), in process',
          unit: 'events/s',
          value: parser,
          baseline: { name: 'JSON.parse of the same NDJSON lines, one thread', value: jsonParse },
        },
        { name: 'ingest request latency p99', unit: 'ms', value: result.p99Ms },
        ...whereTheTimeGoes(bodies, owner, result.cpuUsPerRequest / EVENTS_PER_BATCH, result.systemUsPerRequest / EVENTS_PER_BATCH, 1e6 / jsonParse),
      ];
      return results;
    } finally {
      await app.stop();
    }
  },
};
