/**
 * A bench server in its own process. BENCH_SERVER=app: the real Playline app on a temp SQLite
 * data dir with one workspace and key; BENCH_SERVER=static: `@fastify/static` serving the
 * directory BENCH_STATIC_ROOT (the media benchmark's baseline); BENCH_SERVER=bare: a bare Fastify JSON route, the
 * baseline (BENCH_BARE_PLAYLIST=<asset id>: it answers that asset's HLS playlist text instead,
 * the playback edge's baseline; PATCH /bare/:id echoes a JSON body, the target PATCH's baseline).
 * Prints `READY <url>` and, for the app, `CREDENTIALS <owner> <key>` (and with BENCH_TARGET=1,
 * `TARGET <id>` of a zixi publishing target it created).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { fastifyStatic } from '@fastify/static';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/platform/config.js';
import { createRuntime } from '../../src/runtime.js';
import { bareEdgePlaylist } from '../playback-edge.fixtures.js';

const kind = process.env.BENCH_SERVER ?? 'app';

if (kind === 'static') {
  const app = Fastify({ logger: false });
  await app.register(fastifyStatic, { root: process.env.BENCH_STATIC_ROOT ?? '.', index: false, list: false });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(`READY ${url}\n`);
} else if (kind === 'bare') {
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
  process.stdout.write(`READY ${url}\n`);
} else {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-bench-'));
  const config = loadConfig({ ...process.env, PLAYLINE_DATA_DIR: dataDir, PLAYLINE_LOG_LEVEL: 'silent' });
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
    process.stdout.write(`TARGET ${target.id}\n`);
  }
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(`CREDENTIALS ${workspace.id} ${key.secret}\nREADY ${url}\n`);
  process.on('SIGTERM', () => {
    void app.close().then(() => runtime.close()).then(() => process.exit(0));
  });
}
