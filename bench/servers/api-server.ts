/**
 * A bench server in its own process. BENCH_SERVER=app: the real Playline app on a temp SQLite
 * data dir with one workspace and key; BENCH_SERVER=static: `@fastify/static` serving the
 * directory BENCH_STATIC_ROOT (the media benchmark's baseline); BENCH_SERVER=bare: a bare Fastify JSON route, the
 * baseline (BENCH_BARE_PLAYLIST=<asset id>: it answers that asset's HLS playlist text instead,
 * the playback edge's baseline; PATCH /bare/:id echoes a JSON body, the target PATCH's baseline).
 * Announces `READY <url>` and, for the app, `CREDENTIALS <owner> <key>` (and with BENCH_TARGET=1,
 * `TARGET <id>` of a zixi publishing target it created) over IPC (bench/lib/bench-ipc.ts).
 *
 * The app runs with the default configuration, as `npm start` does: logs at the default level
 * (info: one access line per request) on stdout, which startBenchServer sends to a file. The
 * baselines (bare, static) log nothing, as a bare route would. The app answers commands: `level`
 * (set the log level, e.g. `warn`, for the same figure with access lines off), `cpu` (CPU time
 * used so far, µs; every kind answers it), `size` (the
 * statistics store's size), `probe-start` / `probe-stop` (GC pauses and event-loop delay while a
 * load runs), `heap` (heap after GC; the server then runs with --expose-gc) and `cpu-start` /
 * `cpu-stop <file>` (a CPU profile of what runs in between).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { fastifyStatic } from '@fastify/static';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/platform/config.js';
import { createRuntime } from '../../src/runtime.js';
import { applyServerV8Settings } from '../../src/cli/node-flags.js';
import { bareEdgePlaylist } from '../playback-edge.fixtures.js';
import { announce, serveCommands } from '../lib/bench-ipc.js';
import { CpuProfile, HeapSampling, ServerProbes, heapAfterGc } from '../lib/server-probes.js';

const kind = process.env.BENCH_SERVER ?? 'app';

/** Every server kind: `cpu` answers the process's CPU time so far (user + system, µs). */
const cpuCommand = {
  cpu: () => {
    const { user, system } = process.cpuUsage();
    return user + system;
  },
  /** The same split: system is the kernel's share (sockets, fsync). */
  'cpu-split': () => process.cpuUsage(),
};

if (kind === 'static') {
  serveCommands(cpuCommand);
  const app = Fastify({ logger: false });
  await app.register(fastifyStatic, { root: process.env.BENCH_STATIC_ROOT ?? '.', index: false, list: false });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  announce(`READY ${url}`);
} else if (kind === 'bare') {
  // The baseline can be profiled too (BENCH_PROFILE=bare in bench/profile-ingest.ts), to set its profile beside the app's.
  const cpu = new CpuProfile();
  serveCommands({ ...cpuCommand, 'cpu-start': () => cpu.start(), 'cpu-stop': (file) => cpu.stop(String(file)) });
  const app = Fastify({ logger: false });
  const playlistOf = process.env.BENCH_BARE_PLAYLIST;
  if (playlistOf) {
    const text = bareEdgePlaylist(playlistOf);
    app.get('/bare', async (_request, reply) => reply.type('application/vnd.apple.mpegurl').send(text));
  } else {
    app.get('/bare', async () => ({ '@id': '/api/v4/workspace', '@type': 'Workspace', id: 'a'.repeat(32), name: 'bench', created_at: 1 }));
  }
  // The syndication benchmark's baseline: parse a JSON body, answer JSON.
  app.patch('/bare/:id', async (request) => ({ id: (request.params as { id: string }).id, body: request.body }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  announce(`READY ${url}`);
} else {
  // The app as `playline serve` runs it: with the V8 settings the server gives itself.
  applyServerV8Settings();
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-bench-'));
  const config = loadConfig({ ...process.env, PLAYLINE_DATA_DIR: dataDir });
  const runtime = await createRuntime(config);
  if (process.env.BENCH_NO_AUTH_CACHE === '1') runtime.authenticator.disableCache();
  await runtime.start();
  const workspace = await runtime.workspaces.createWorkspace('bench');
  const key = await runtime.workspaces.createKey(workspace.id);
  const app = await buildApp(runtime);
  if (process.env.BENCH_TARGET === '1') {
    const target = await runtime.syndication.targets.create(workspace.id, {
      platform: 'Pluto TV',
      target_protocol: 'zixi',
      platform_config: { host: 'zixi.example.net', port: 2088, password: 'initial', stream_id: 'bench-stream' },
    });
    announce(`TARGET ${target.id}`);
  }
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const probes = new ServerProbes();
  const cpu = new CpuProfile();
  const heapSampling = new HeapSampling();
  serveCommands({
    ...cpuCommand,
    level: (level) => {
      runtime.log.level = String(level);
      return runtime.log.level;
    },
    size: () => runtime.vodStats.store.size(),
    'probe-start': () => probes.start(),
    'probe-stop': () => probes.stop(),
    heap: () => heapAfterGc(),
    // What the process holds as it runs (no GC first): the soak prints it per minute next to RSS.
    memory: () => process.memoryUsage(),
    'cpu-start': () => cpu.start(),
    'cpu-stop': (file) => cpu.stop(String(file)),
    'heap-start': () => heapSampling.start(),
    'heap-stop': (file) => heapSampling.stop(String(file)),
  });
  announce(`CREDENTIALS ${workspace.id} ${key.secret}`);
  announce(`READY ${url}`);
  process.on('SIGTERM', () => {
    void app.close().then(() => runtime.close()).then(() => process.exit(0));
  });
}
