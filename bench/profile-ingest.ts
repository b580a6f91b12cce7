/**
 * `npx tsx bench/profile-ingest.ts`: the app as shipped (default configuration, its log to a
 * file) under the ingest benchmark's load (1,000-event NDJSON batches, 4 connections) with V8's
 * CPU profiler (what --cpu-prof runs, started after a warm-up and stopped with the load, so
 * the server's start is not in it); prints where the server's CPU went by function (self time),
 * per event. The profile (.cpuprofile, for Chrome DevTools) is kept in BENCH_PROFILE_DIR
 * (default a temp dir). BENCH_PROFILE=get profiles the signed single-asset GET instead;
 * BENCH_PROFILE_LEVEL=warn sets the log level first; BENCH_PROFILE=bare profiles the bare route, the
 * GET's baseline, under the same load; BENCH_PROFILE=callbacks profiles the callbacks benchmark's
 * ingest (10 % error events) with an Error Reporting callback to a local receiver (BENCH_PROFILE=callbacks-off:
 * the same ingest with no callback configured, its baseline);
 * BENCH_PROFILE_HEAP=1 takes a sampling heap profile of the same load instead (bytes by allocation
 * site of what outlived the young generation: what scavenges copy and promote).
 * BENCH_PROFILE=segment profiles 2.6 MB segments through a playback session (the media benchmark's
 * in-process load, 50 connections); BENCH_PROFILE=playlist its variant playlist.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { signPlaybackUrl } from '../src/modules/playback-edge/playback-token.js';
import { writeFakeAsset } from '../src/modules/playback-edge/testing/media-fixtures.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signV4 } from '../src/platform/auth/v4-signature.js';
import { ndjsonBatch, receiverScript } from './callbacks.bench.js';
import { ingestBodies } from './ingest.bench.js';
import { load, startBenchServer, type LoadResult } from './lib/http-load.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface HeapNode {
  callFrame: ProfileNode['callFrame'];
  selfSize: number;
  children: HeapNode[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const server = new URL('./servers/api-server.ts', import.meta.url).pathname;
const dir = process.env.BENCH_PROFILE_DIR ?? join(tmpdir(), `playline-profile-${process.pid}`);
mkdirSync(dir, { recursive: true });
const what = process.env.BENCH_PROFILE ?? 'ingest';

// BENCH_PROFILE=callbacks: the ingest of the callbacks benchmark (10 % error events) with a callback to a local receiver.
const receiver = what === 'callbacks' ? await startBenchServer(receiverScript) : undefined;
const media = what === 'segment' || what === 'playlist';
const mediaRoot = media ? mkdtempSync(join(tmpdir(), 'playline-profile-media-')) : '';
const app = await startBenchServer(server, {
  BENCH_SERVER: what === 'bare' ? 'bare' : 'app',
  ...(media ? { PLAYLINE_MEDIA_DIR: mediaRoot, PLAYLINE_PLAYBACK_REFUSAL_LIMIT: '0' } : {}),
  ...(receiver ? { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_CALLBACK_RATE: '1000000', PLAYLINE_CALLBACK_QUEUE: '10000' } : {}),
});
/** BENCH_PROFILE_HEAP=1: a sampling heap profile (what outlived the young generation, by allocation site) instead of the CPU profile. */
const heap = process.env.BENCH_PROFILE_HEAP === '1';
const file = join(dir, `${what}-${Date.now()}.${heap ? 'heapprofile' : 'cpuprofile'}`);
// BENCH_PROFILE_LEVEL=warn: the same with access lines off.
if (process.env.BENCH_PROFILE_LEVEL) await app.command('level', process.env.BENCH_PROFILE_LEVEL);
/** Runs the load twice, profiling the second run (the first warms up), and returns its figures. */
const profiled = async (options: Parameters<typeof load>[0]): Promise<LoadResult> => {
  await load({ ...options, durationS: 2 });
  await app.command(heap ? 'heap-start' : 'cpu-start');
  const measured = await load(options);
  await app.command(heap ? 'heap-stop' : 'cpu-stop', file);
  return measured;
};

const credentials = (): { owner: string; key: string } => {
  const creds = /CREDENTIALS (\S+) (\S+)/.exec(app.output());
  if (!creds?.[1] || !creds[2]) throw new Error('bench server printed no credentials');
  return { owner: creds[1], key: creds[2] };
};

let result: LoadResult;
if (what === 'bare') {
  result = await profiled({ url: `${app.url}/bare` });
  process.stdout.write(`bare route: ${Math.round(result.requestsPerSec)} req/s\n`);
} else {
  const { owner, key } = credentials();
  const { msg, sig } = signV4(owner, key, Math.floor(Date.now() / 1000));
  const signed = (path: string) => `${path}?msg=${encodeURIComponent(msg)}&sig=${sig}`;
  if (media) {
    const rendition = [{ name: '1080p', width: 1920, height: 1080, bandwidth: 6_000_000 }];
    await writeFakeAsset(mediaRoot, owner, 'profile', { durations: Array.from({ length: 30 }, () => 4), segmentBytes: 2_600_000, renditions: rendition });
    const url = signPlaybackUrl({ baseUrl: '', kind: 'asset', contentId: 'profile', owner, key, expiresAt: Math.floor(Date.now() / 1000) + 3600 }, () => randomBytes(8).toString('hex'));
    const multivariant = await (await fetch(`${app.url}${url}`)).text();
    const variant = new URL(multivariant.split('\n').find((l) => l.length > 0 && !l.startsWith('#')) as string, `${app.url}${url}`);
    const segments = (await (await fetch(variant)).text()).split('\n').filter((l) => l.length > 0 && !l.startsWith('#')).map((l) => new URL(l, variant).pathname);
    const paths = what === 'segment' ? segments : [variant.pathname];
    result = await profiled({ url: app.url, connections: 50, requests: paths.map((path) => ({ path })) });
    process.stdout.write(`${what}s: ${Math.round(result.requestsPerSec)} req/s\n`);
  } else if (what === 'get') {
    const asset = '0'.repeat(32);
    await fetch(`${app.url}${signed('/api/v4/monitoring/events')}`, { method: 'POST', body: `{"type":"start","owner":"${owner}","asset_id":"${asset}","session_id":"s"}`, headers: { 'content-type': 'application/x-ndjson' } });
    result = await profiled({ url: `${app.url}${signed(`/api/v4/monitoring/vod-stats/${asset}`)}` });
    process.stdout.write(`single-asset GET: ${Math.round(result.requestsPerSec)} req/s\n`);
  } else if (what === 'callbacks' || what === 'callbacks-off') {
    if (receiver) {
      const put = await fetch(`${app.url}${signed('/api/v4/error-reporting/settings')}`, { method: 'PUT', body: JSON.stringify({ callback_url: receiver.url }), headers: { 'content-type': 'application/json' } });
      if (put.status !== 200) throw new Error(`saving the callback answered ${put.status}`);
    }
    const before = receiver ? await receiver.command<number>('count') : 0;
    result = await profiled({ url: app.url, connections: 8, requests: [{ method: 'POST', path: signed('/api/v4/monitoring/events'), body: ndjsonBatch(owner, 1000, 0.1), headers: { 'content-type': 'application/x-ndjson' } }] });
    const delivered = receiver ? (await receiver.command<number>('count')) - before : 0;
    process.stdout.write(`ingest ${receiver ? 'with' : 'without'} callbacks: ${Math.round(result.requestsPerSec * 1000)} events/s; ${delivered} reports delivered over both loads\n`);
  } else {
    const requests = ingestBodies(owner, 8, 1000).map((body) => ({ method: 'POST', path: signed('/api/v4/monitoring/events'), body, headers: { 'content-type': 'application/x-ndjson' } }));
    result = await profiled({ url: app.url, connections: 4, requests });
    process.stdout.write(`ingest: ${Math.round(result.requestsPerSec * 1000)} events/s (${Math.round(result.requestsPerSec)} batches/s)\n`);
  }
}
await app.stop();
await receiver?.stop();

const where = (f: ProfileNode['callFrame']): string =>
  `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules\/[^/]+|src\/.*|bench\/.*)$/, '$1').replace(/^node:/, '')}:${f.lineNumber + 1}:${f.columnNumber + 1}`;

if (heap) {
  // Bytes sampled per allocation site: objects still alive at the end or collected by a major GC (they were promoted).
  const sampled = JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode };
  const bySite = new Map<string, number>();
  const visit = (node: HeapNode): void => {
    const name = where(node.callFrame);
    bySite.set(name, (bySite.get(name) ?? 0) + node.selfSize);
    for (const child of node.children) visit(child);
  };
  visit(sampled.head);
  const bytes = [...bySite.values()].reduce((a, b) => a + b, 0);
  process.stdout.write(`heap profile ${file}: ${(bytes / 1e6).toFixed(1)} MB sampled that outlived the young generation, by allocation site\n`);
  for (const [name, b] of [...bySite.entries()].sort((x, y) => y[1] - x[1]).slice(0, Number(process.env.BENCH_PROFILE_TOP ?? 40))) {
    process.stdout.write(`  ${((b / bytes) * 100).toFixed(1).padStart(5)} %  ${(b / 1e6).toFixed(2)} MB  ${name}\n`);
  }
  process.exit(0);
}

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...self.entries()].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)').reduce((a, [, t]) => a + t, 0);
const busy = total - idle;
const byFunction = new Map<string, number>();
for (const [id, t] of self) {
  const f = byId.get(id)?.callFrame;
  if (!f || f.functionName === '(idle)') continue;
  const name = where(f);
  byFunction.set(name, (byFunction.get(name) ?? 0) + t);
}
const requests = result.requestsPerSec * Number(process.env.BENCH_DURATION_S ?? 5);
const perEvent = what === 'ingest' || what.startsWith('callbacks');
const unit = perEvent ? 'event' : 'request';
const per = perEvent ? requests * 1000 : requests;
process.stdout.write(`profile ${file}: busy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s, ${(busy / per).toFixed(2)} us per ${unit} (whole run)\n`);
for (const [name, t] of [...byFunction.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BENCH_PROFILE_TOP ?? 40))) {
  process.stdout.write(`  ${((t / busy) * 100).toFixed(1).padStart(5)} %  ${(t / per).toFixed(3)} us/${unit}  ${name}\n`);
}
