/**
 * Error Reporting callbacks: reports/s the dispatcher delivers to a local keep-alive receiver
 * (baseline: plain undici POSTs with the same concurrency), from the sender thread as shipped and
 * from the main thread; the delivery log's write cost as it grows; and ingest throughput with and
 * without delivery running, in alternating rounds (baseline: the same ingest with no callback
 * configured), with the reports delivered meanwhile (baseline: the plain undici rate).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { systemClock } from '../src/platform/clock.js';
import { randomIds } from '../src/platform/ids.js';
import { signV4 } from '../src/platform/auth/v4-signature.js';
import { parseCallbackAllowList } from '../src/platform/net/callback-allowlist.js';
import { createOutbound } from '../src/platform/net/outbound.js';
import { CallbackClient } from '../src/platform/outbound/delivery-client.js';
import type { CallbackTransport } from '../src/platform/outbound/delivery-client.js';
import { ThreadedCallbackSender } from '../src/modules/error-reporting/callback-sender.js';
import { CallbackDispatcher } from '../src/modules/error-reporting/callback-dispatcher.js';
import type { ErrorReportInput } from '../src/modules/error-reporting/error-report.js';
import { generateSigningSecret, WebhookSigner } from '../src/platform/outbound/webhook-signature.js';
import { DeliveryLogStore } from '../src/modules/error-reporting/delivery-log-store.js';
import { openStorage } from '../src/platform/db/database.js';
import { migrations } from '../src/migrations.js';
import { load, startBenchServer } from './lib/http-load.js';
import type { Benchmark, Comparison } from './lib/report.js';

export const receiverScript = new URL('./callbacks-receiver.ts', import.meta.url).pathname;
const apiServerScript = new URL('./servers/api-server.ts', import.meta.url).pathname;
const durationS = Number(process.env.BENCH_DURATION_S ?? 5);
/** Requests in flight per endpoint, for the dispatcher and the raw baseline alike (PLAYLINE_CALLBACK_CONCURRENCY's default). */
const concurrency = 32;

const report: ErrorReportInput = {
  owner: 'bench',
  url: 'https://edge.example.com/play/0123456789abcdef0123456789abcdef.m3u8?exp=1&sig=abc',
  ip: '203.0.113.77',
  code: 403,
  ua: 'Mozilla/5.0 (bench) AppleWebKit/537.36',
  msg: 'Invalid token signature',
  timestamp: 1_763_719_200,
};

type Receiver = Awaited<ReturnType<typeof startBenchServer>>;

const receiverCount = (receiver: Receiver): Promise<number> => receiver.command<number>('count');

/** Plain undici: `concurrency` loops POSTing the same body for the duration. */
const rawPosts = async (url: string, body: string): Promise<{ perSecond: number; cpuUsPerReport: number }> => {
  const target = new URL(url);
  const cpu = process.cpuUsage();
  const pool = new Pool(target.origin, { connections: concurrency, pipelining: 1 });
  const deadline = Date.now() + durationS * 1000;
  let sent = 0;
  const worker = async () => {
    while (Date.now() < deadline) {
      const res = await pool.request({ path: target.pathname, method: 'POST', body, headers: { 'content-type': 'application/json' } });
      await res.body.dump();
      if (res.statusCode === 200) sent += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const used = process.cpuUsage(cpu);
  await pool.close();
  return { perSecond: sent / durationS, cpuUsPerReport: (used.user + used.system) / sent };
};

interface Deliveries {
  perSecond: number;
  /** Process CPU (every thread) per delivered report. */
  cpuUsPerReport: number;
  /** Time the main thread's event loop was busy per delivered report. */
  mainUsPerReport: number;
}

/**
 * The dispatcher with a real transport (the sender thread as shipped, or the client on the main
 * thread): keep its queue topped up for the duration, count deliveries.
 */
const dispatcherDeliveries = async (url: string, sender: 'thread' | 'main'): Promise<Deliveries> => {
  const transport: CallbackTransport & { close(): Promise<void> } =
    sender === 'thread'
      ? new ThreadedCallbackSender({ allowList: '127.0.0.1/32', timeoutMs: 5000, connectionsPerEndpoint: concurrency })
      : new CallbackClient({ outbound: createOutbound({ allowList: parseCallbackAllowList('127.0.0.1/32') }), connectionsPerEndpoint: concurrency });
  // The thread starts with the first delivery: one report first, so its start is not in the figure.
  const warm = new CallbackDispatcher({ transport, clock: systemClock, ids: randomIds });
  warm.setRoute('bench', { owner: 'bench', url, signer: new WebhookSigner([generateSigningSecret()]) });
  warm.submit(report);
  while (warm.stats().totals.delivered === 0) await sleep(10);
  warm.close();
  const dispatcher = new CallbackDispatcher({
    transport,
    clock: systemClock,
    ids: randomIds,
    ratePerSecond: 1_000_000,
    burst: 1_000_000,
    maxInFlight: concurrency,
  });
  dispatcher.setRoute('bench', { owner: 'bench', url, signer: new WebhookSigner([generateSigningSecret()]) });
  const cpu = process.cpuUsage();
  const elu = performance.eventLoopUtilization();
  const started = Date.now();
  const deadline = started + durationS * 1000;
  // Top the queue up every few milliseconds, as ingest batches would; spinning would steal the
  // CPU the receiver and the sockets need.
  while (Date.now() < deadline) {
    for (let i = 0; i < 1000 && dispatcher.submit(report) === 'queued'; i += 1);
    await sleep(5);
  }
  const used = process.cpuUsage(cpu);
  const busy = performance.eventLoopUtilization(elu);
  const { delivered } = dispatcher.stats().totals;
  const perSecond = delivered / ((Date.now() - started) / 1000);
  dispatcher.close();
  await transport.close();
  return { perSecond, cpuUsPerReport: (used.user + used.system) / delivered, mainUsPerReport: (busy.active * 1000) / delivered };
};

/**
 * The delivery log as the server writes it (embedded SQLite, 200-row batches, one workspace):
 * event-loop time per attempt written while the log grows from 0 to 100,000 rows, the last
 * 20,000 against the first 20,000 (a log whose writes cost more as it grows shows a ratio above 1).
 */
const deliveryLogWrites = async (): Promise<{ first: number; last: number }> => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-bench-delivery-log-'));
  const storage = await openStorage({ dataDir, migrations });
  try {
    const log = new DeliveryLogStore({ db: storage.db, clock: systemClock, ids: randomIds, queueCapacity: 1_000_000, retentionMs: 3_600_000, maxPerWorkspace: 1_000_000, writeRatePerS: 2000, onError: () => undefined });
    const body = JSON.stringify({ ...report, subtype: 'web' });
    const headers = { 'webhook-id': 'msg_0123456789abcdef0123456789abcdef', 'webhook-timestamp': '1763719200', 'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=' };
    const perRow: number[] = [];
    for (let written = 0; written < 100_000; written += 200) {
      const started = performance.now();
      for (let i = 0; i < 200; i += 1) {
        log.record('bench', { at: Date.now(), webhookId: headers['webhook-id'], url: 'http://127.0.0.1:40000/', outcome: 'delivered', status: 200, latencyMs: 3 }, { body, headers });
      }
      await log.flush();
      perRow.push(((performance.now() - started) * 1000) / 200);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    return { first: mean(perRow.slice(0, 100)), last: mean(perRow.slice(-100)) };
  } finally {
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
};

export const ndjsonBatch = (owner: string, size: number, errorShare: number): string => {
  const lines: string[] = [];
  for (let i = 0; i < size; i += 1) {
    const isError = i < size * errorShare;
    lines.push(
      JSON.stringify(
        isError
          ? { type: 'error', owner, asset_id: `asset-${i % 50}`, session_id: `s-${i}`, error_code: 110, http_status: 403, url: report.url, ip: report.ip, ua: report.ua, msg: report.msg }
          : { type: i % 2 === 0 ? 'request' : 'start', owner, asset_id: `asset-${i % 50}`, session_id: `s-${i}` },
      ),
    );
  }
  return `${lines.join('\n')}\n`;
};

/** Ingest over HTTP with no callback, then with one to the receiver; null when the ingest route is not there yet. */
const ingestSideBySide = async (receiver: Receiver, rawPerSecond: number): Promise<Comparison[] | null> => {
  const app = await startBenchServer(apiServerScript, {
    BENCH_SERVER: 'app',
    PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32',
    PLAYLINE_CALLBACK_RATE: '1000000',
    PLAYLINE_CALLBACK_QUEUE: '10000',
  });
  try {
    const creds = /CREDENTIALS (\S+) (\S+)/.exec(app.output());
    if (!creds?.[1] || !creds[2]) throw new Error('bench server printed no credentials');
    const [owner, key] = [creds[1], creds[2]];
    const signed = (path: string) => {
      const { msg, sig } = signV4(owner, key, Math.floor(Date.now() / 1000));
      return `${path}?msg=${encodeURIComponent(msg)}&sig=${sig}`;
    };
    const batchSize = 1000;
    const body = ndjsonBatch(owner, batchSize, 0.1);
    const probe = await fetch(`${app.url}${signed('/api/v4/monitoring/events')}`, { method: 'POST', body, headers: { 'content-type': 'application/x-ndjson' } });
    if (probe.status === 404) return null;
    const ingest = () =>
      load({
        url: app.url,
        connections: 8,
        requests: [{ method: 'POST', path: signed('/api/v4/monitoring/events'), body, headers: { 'content-type': 'application/x-ndjson' } }],
      });
    const setCallback = async (on: boolean) => {
      const settings = `${app.url}${signed('/api/v4/error-reporting/settings')}`;
      const answer = on
        ? await fetch(settings, { method: 'PUT', body: JSON.stringify({ callback_url: receiver.url }), headers: { 'content-type': 'application/json' } })
        : await fetch(settings, { method: 'DELETE' });
      if (answer.status >= 300) throw new Error(`${on ? 'saving' : 'removing'} the callback answered ${answer.status}: ${await answer.text()}`);
    };
    // Warm-up with delivery on: the JIT, and the sender thread, which starts with the first delivery.
    await setCallback(true);
    await ingest();
    /**
     * `rounds` of off then on, back to back: this machine's speed drifts by more than the effect
     * measured, so one pair (or a fixed order) says little. The round with the median ratio stands
     * for the run (medians of the two sides taken apart would pair figures from different rounds).
     */
    const roundsOf = async (rounds: number, level: string) => {
      const off: number[] = [];
      const on: number[] = [];
      const deliveredPerS: number[] = [];
      for (let round = 0; round < rounds; round += 1) {
        await setCallback(false);
        const without = await ingest();
        await setCallback(true);
        const before = await receiverCount(receiver);
        const withDelivery = await ingest();
        deliveredPerS.push(((await receiverCount(receiver)) - before) / durationS);
        if (without.non2xx > 0 || withDelivery.non2xx > 0) throw new Error('ingest answered non-2xx');
        off.push(without.requestsPerSec * batchSize);
        on.push(withDelivery.requestsPerSec * batchSize);
      }
      process.stdout.write(`  ingest while delivering at ${level}, by round (on/off): ${on.map((v, i) => (v / (off[i] as number)).toFixed(3)).join(', ')}\n`);
      const byRatio = on.map((_, i) => i).sort((a, b) => (on[a] as number) / (off[a] as number) - (on[b] as number) / (off[b] as number));
      const middle = byRatio[Math.floor(rounds / 2)] as number;
      return { without: off[middle] as number, with: on[middle] as number, delivered: deliveredPerS[middle] as number };
    };
    const rounds = 5;
    const atInfo = await roundsOf(rounds, 'info');
    await app.command('level', 'warn');
    const atWarn = await roundsOf(3, 'warn');
    await app.command('level', 'info');
    const eventsWithout = atInfo.without;
    const eventsWith = atInfo.with;
    const delivered = atInfo.delivered;
    return [
      {
        name: `ingest while delivering (10 % error events), default configuration (access lines at info), the median of ${rounds} rounds`,
        unit: 'events/s',
        value: eventsWith,
        baseline: { name: 'ingest, no callback configured, same round', value: eventsWithout },
        target: '>= 80 % of baseline',
        met: eventsWith >= 0.8 * eventsWithout,
      },
      {
        name: 'same at warn, the median of 3 rounds',
        unit: 'events/s',
        value: atWarn.with,
        baseline: { name: 'ingest, no callback configured, same round', value: atWarn.without },
      },
      {
        name: 'reports delivered meanwhile (the median round at info)',
        unit: 'reports/s',
        value: delivered,
        baseline: { name: `plain undici POSTs alone, ${concurrency} in flight (above)`, value: rawPerSecond },
        target: '>= 20,000/s',
        met: delivered >= 20_000,
      },
    ];
  } finally {
    await app.stop();
  }
};

export const callbacksBenchmark: Benchmark = {
  name: 'callbacks',
  description: 'error reports to a local keep-alive receiver; ingest with and without delivery',
  async run() {
    const receiver = await startBenchServer(receiverScript);
    try {
      const body = JSON.stringify({ ...report, subtype: 'web' });
      const raw = await rawPosts(`${receiver.url}`, body);
      const dispatched = await dispatcherDeliveries(receiver.url, 'thread');
      const inline = await dispatcherDeliveries(receiver.url, 'main');
      const results: Comparison[] = [
        {
          name: `dispatcher deliveries (signed, ${concurrency} in flight, sender thread as shipped)`,
          unit: 'reports/s',
          value: dispatched.perSecond,
          baseline: { name: `plain undici POSTs, ${concurrency} in flight`, value: raw.perSecond },
          target: '>= 20,000/s',
          met: dispatched.perSecond >= 20_000,
        },
        {
          name: 'dispatcher deliveries, sent from the main thread (PLAYLINE_CALLBACK_THREAD=false)',
          unit: 'reports/s',
          value: inline.perSecond,
          baseline: { name: `plain undici POSTs, ${concurrency} in flight`, value: raw.perSecond },
        },
        {
          // CPU per report moves less than throughput when other processes share the cores.
          name: 'sender CPU per delivered report (all threads)',
          unit: 'us',
          value: dispatched.cpuUsPerReport,
          baseline: { name: 'plain undici POST', value: raw.cpuUsPerReport },
        },
        {
          name: 'main-thread time per delivered report, sender thread',
          unit: 'us',
          value: dispatched.mainUsPerReport,
          baseline: { name: 'sent from the main thread', value: inline.mainUsPerReport },
        },
      ];
      const logged = await deliveryLogWrites();
      results.push({
        name: 'delivery log: time per attempt written, rows 80,000-100,000 (SQLite, 200-row batches)',
        unit: 'us',
        value: logged.last,
        baseline: { name: 'rows 0-20,000', value: logged.first },
      });
      const ingest = await ingestSideBySide(receiver, raw.perSecond);
      if (ingest) results.push(...ingest);
      else process.stdout.write('  ingest side by side: skipped, POST /api/v4/monitoring/events is not wired yet\n');
      return results;
    } finally {
      await receiver.stop();
    }
  },
};
