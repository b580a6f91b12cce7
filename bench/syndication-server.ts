/**
 * The bench server of the syndication benchmark, in its own process. BENCH_SERVER=app: the
 * Playline app with the syndication routes on a temp SQLite data dir, one workspace, key and
 * zixi target; prints `CREDENTIALS <owner> <key> <target id>`. BENCH_SERVER=bare: a bare
 * Fastify PATCH route that parses a JSON body and answers JSON (the baseline).
 * Prints `READY <url>`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { loadConfig } from '../src/platform/config.js';
import { createRuntime } from '../src/runtime.js';
import { buildApp } from '../src/app.js';

if (process.env.BENCH_SERVER === 'bare') {
  const app = Fastify({ logger: false });
  app.patch('/bare/:id', async (request) => ({ id: (request.params as { id: string }).id, body: request.body }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(`READY ${url}\n`);
} else {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-bench-'));
  const config = loadConfig({ ...process.env, PLAYLINE_DATA_DIR: dataDir, PLAYLINE_LOG_LEVEL: 'silent' });
  const runtime = await createRuntime(config);
  await runtime.start();
  const workspace = await runtime.workspaces.createWorkspace('bench');
  const key = await runtime.workspaces.createKey(workspace.id);
  const app = await buildApp(runtime, { logger: false });
  const module = runtime.syndication;
  const target = await module.targets.create(workspace.id, {
    platform: 'Pluto TV',
    target_protocol: 'zixi',
    platform_config: { host: 'zixi.example.net', port: 2088, password: 'initial', stream_id: 'bench-stream' },
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(`CREDENTIALS ${workspace.id} ${key.secret} ${target.id}\nREADY ${url}\n`);
  process.on('SIGTERM', () => {
    void app.close().then(() => runtime.close()).then(() => process.exit(0));
  });
}
