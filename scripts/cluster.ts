/**
 * `npm run cluster [-- --instances 3 --port 8081]`: a local Playline cluster. Starts N instances
 * (default 2) on consecutive ports against the local PostgreSQL and Redis, prints their URLs, a
 * workspace key and signed example commands, and stops them all on Ctrl-C.
 *
 * PLAYLINE_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/playline, created if missing),
 * PLAYLINE_REDIS_URL (default redis://127.0.0.1:6379), PLAYLINE_SECRET_KEY and
 * PLAYLINE_ADMIN_TOKEN (default: generated once into ./data/cluster/) may be set as usual.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { signV4 } from '../src/platform/auth/v4-signature.js';
import { SERVER_NODE_FLAGS } from '../src/cli/node-flags.js';

/** The CLI's source, wherever the runner is started from (its state stays in ./data/cluster of the working directory). */
const CLI_MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));

const usage = `Usage: npm run cluster [-- --instances N] [--port FIRST_PORT]

A local Playline cluster: N instances (default 2) on consecutive ports from FIRST_PORT (default
8081; 0: ports the system picks) against the local PostgreSQL and Redis; prints their URLs, a
workspace key and signed example commands; Ctrl-C stops them all.

Environment: PLAYLINE_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/playline, created
if missing), PLAYLINE_REDIS_URL (default redis://127.0.0.1:6379), PLAYLINE_SECRET_KEY and
PLAYLINE_ADMIN_TOKEN (default: generated once into ./data/cluster/), PLAYLINE_LOG_LEVEL (warn).
\`playline cluster status\` needs the instances' PLAYLINE_SECRET_KEY: export it from
data/cluster/secret.key (PLAYLINE_SECRET_KEY=$(cat data/cluster/secret.key)).
`;

/** A failure the user can act on: its message, no stack trace, exit code 1. */
function fail(message: string): never {
  process.stderr.write(`npm run cluster: ${message}\n`);
  process.exit(1);
}

let parsed;
try {
  parsed = parseArgs({ options: { instances: { type: 'string', default: '2' }, port: { type: 'string', default: '8081' }, help: { type: 'boolean', short: 'h' } } });
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n\n${usage}`);
  process.exit(2);
}
const { values } = parsed;
if (values.help) {
  process.stdout.write(usage);
  process.exit(0);
}
const count = Number(values.instances);
const firstPort = Number(values.port);
if (!Number.isInteger(count) || count < 1 || count > 16 || !Number.isInteger(firstPort) || firstPort < 0 || firstPort + count > 65536) {
  process.stderr.write(`--instances must be 1 to 16 and --port a port number\n\n${usage}`);
  process.exit(2);
}

const stateDir = join(process.cwd(), 'data', 'cluster');
mkdirSync(stateDir, { recursive: true, mode: 0o700 });
/** A value kept in ./data/cluster/<name> so every run (and every instance) shares it. */
const kept = (name: string, make: () => string): string => {
  const path = join(stateDir, name);
  if (!existsSync(path)) writeFileSync(path, make(), { mode: 0o600 });
  return readFileSync(path, 'utf8').trim();
};

const databaseUrl = process.env.PLAYLINE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/playline';
const redisUrl = process.env.PLAYLINE_REDIS_URL ?? 'redis://127.0.0.1:6379';
const env: Record<string, string> = {
  PLAYLINE_DATABASE_URL: databaseUrl,
  PLAYLINE_REDIS_URL: redisUrl,
  PLAYLINE_SECRET_KEY: process.env.PLAYLINE_SECRET_KEY ?? kept('secret.key', () => randomBytes(32).toString('base64')),
  PLAYLINE_ADMIN_TOKEN: process.env.PLAYLINE_ADMIN_TOKEN ?? kept('admin.token', () => randomBytes(24).toString('hex')),
  PLAYLINE_LOG_LEVEL: process.env.PLAYLINE_LOG_LEVEL ?? 'warn',
  // One media directory for every instance (uploads are received by one and packaged by any).
  PLAYLINE_MEDIA_DIR: process.env.PLAYLINE_MEDIA_DIR ?? join(stateDir, 'media'),
};

/**
 * Creates the database when it does not exist yet (the default URL's or PLAYLINE_DATABASE_URL's),
 * through the server's `postgres` database; a server that cannot be reached or refuses is a
 * clear error, not a stack trace from the first instance.
 */
async function ensureDatabase(url: string): Promise<void> {
  const parsed = new URL(url);
  const name = decodeURIComponent(parsed.pathname.slice(1));
  if (name === '') fail(`PLAYLINE_DATABASE_URL names no database: ${url.replace(/:[^:@/]*@/, ':***@')}`);
  const adminUrl = new URL(url);
  adminUrl.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  const shown = `${parsed.host}/${name}`;
  try {
    await admin.connect();
    const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      await admin.query(`create database "${name.replaceAll('"', '""')}"`);
      process.stdout.write(`Created the database ${shown}\n`);
    }
  } catch (err) {
    fail(`cannot create or reach the database ${shown}: ${(err as Error).message}. Create it yourself (createdb ${name}) or set PLAYLINE_DATABASE_URL to one that exists`);
  } finally {
    await admin.end().catch(() => undefined);
  }
}

const children: ChildProcess[] = [];
function startInstance(index: number): Promise<string> {
  // The runner's own Node flags (tsx's loader) and the server's (else each instance warns of the missing --max-semi-space-size).
  const port = firstPort === 0 ? 0 : firstPort + index;
  const child = spawn(process.execPath, [...process.execArgv.filter((a) => !SERVER_NODE_FLAGS.includes(a)), ...SERVER_NODE_FLAGS, CLI_MAIN, 'serve', '--port', String(port)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const tag = `[${index + 1}] `;
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      seen += text;
      for (const line of text.split('\n')) if (line.trim() !== '') process.stdout.write(`${tag}${line}\n`);
      const match = /Playline listening on (\S+)/.exec(seen);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`instance ${index + 1} exited with ${code}:\n${seen}`)));
  });
}

/** Signs in with the demo workspace kept in ./data/cluster, creating it through the admin API once. */
async function demoCredentials(url: string): Promise<{ owner: string; key: string }> {
  const saved = join(stateDir, 'workspace.json');
  if (existsSync(saved)) {
    const credentials = JSON.parse(readFileSync(saved, 'utf8')) as { owner: string; key: string };
    const { msg, sig } = signV4(credentials.owner, credentials.key, Math.floor(Date.now() / 1000));
    const check = await fetch(`${url}/api/v4/workspace?msg=${encodeURIComponent(msg)}&sig=${sig}`);
    if (check.ok) return credentials;
  }
  const headers = { authorization: `Bearer ${env.PLAYLINE_ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const workspace = (await (await fetch(`${url}/api/v4/admin/workspaces`, { method: 'POST', headers, body: JSON.stringify({ name: 'Cluster demo' }) })).json()) as { id: string };
  const key = (await (await fetch(`${url}/api/v4/admin/workspaces/${workspace.id}/keys`, { method: 'POST', headers, body: JSON.stringify({ label: 'npm run cluster' }) })).json()) as { secret: string };
  const credentials = { owner: workspace.id, key: key.secret };
  writeFileSync(saved, JSON.stringify(credentials), { mode: 0o600 });
  return credentials;
}

function stopAll(): Promise<void> {
  return Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  ).then(() => undefined);
}

await ensureDatabase(databaseUrl);
// The first instance migrates the database alone; the others start once it listens.
let urls: string[];
try {
  urls = [await startInstance(0)];
  urls.push(...(await Promise.all(Array.from({ length: count - 1 }, (_, i) => startInstance(i + 1)))));
} catch (err) {
  await stopAll();
  fail((err as Error).message);
}
const { owner, key } = await demoCredentials(urls[0] as string);
const signed = (url: string, path: string) => {
  const { msg, sig } = signV4(owner, key, Math.floor(Date.now() / 1000));
  return `${url}${path}${path.includes('?') ? '&' : '?'}msg=${encodeURIComponent(msg)}&sig=${sig}`;
};
const [a, b = a] = urls as [string, string?];
const now = Date.now();
process.stdout.write(
  [
    '',
    `Playline cluster: ${count} instance${count === 1 ? '' : 's'} on PostgreSQL ${databaseUrl.replace(/:[^:@/]*@/, ':***@')} and Redis ${redisUrl}`,
    ...urls.map((url, i) => `  instance ${i + 1}: ${url}`),
    `  workspace ${owner}, API key ${key} (kept in data/cluster/workspace.json)`,
    `  admin token in data/cluster/admin.token: GET ${a}/api/v4/admin/cluster shows the members`,
    '',
    'Send a start event to the first instance, read it from the last (signatures valid 5 minutes):',
    `  curl -s -X POST -H 'content-type: application/x-ndjson' --data '{"type":"start","owner":"${owner}","asset_id":"demo-asset","session_id":"s-${now}"}' '${signed(a, '/api/v4/monitoring/events')}'`,
    `  curl -s '${signed(b as string, '/api/v4/monitoring/vod-stats/demo-asset')}'`,
    '',
    'Sign any request later with:',
    `  PLAYLINE_API_KEY='${key}' npx playline sign --owner ${owner} --base-url ${b} /api/v4/monitoring/vod-stats/owner-summary`,
    '',
    'Ctrl-C stops every instance.',
    '',
  ].join('\n'),
);

let stopping = false;
const onSignal = () => {
  if (stopping) process.exit(1);
  stopping = true;
  process.stdout.write('\nStopping the cluster...\n');
  void stopAll().then(() => process.exit(0));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
for (const child of children) {
  child.once('exit', (code, signal) => {
    if (!stopping) process.stdout.write(`An instance exited (${signal ?? code}); the others keep serving.\n`);
  });
}
