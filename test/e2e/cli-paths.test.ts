import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { playline, type CliResult } from '../helpers/cli.js';
import { clusterFixture, CLUSTER_SECRET_KEY, type ClusterFixture } from '../helpers/cluster.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('CLI paths that used to mislead', () => {
  const base = mkdtempSync(join(tmpdir(), 'playline-cli-paths-'));
  after(() => rmSync(base, { recursive: true, force: true }));

  test('a mistyped --data-dir on a read-only command refuses and creates nothing', async () => {
    const typo = join(base, 'dtaa');
    const empty = join(base, 'empty');
    mkdirSync(empty);
    const commands = [
      ['workspaces', 'list'],
      ['keys', 'list', '--owner', 'abc'],
      ['keys', 'create', '--owner', 'abc'],
      ['keys', 'revoke', 'key_1', '--owner', 'abc'],
      ['cluster', 'status'],
    ];
    // Each call refuses before it opens anything, so they run side by side.
    const tried = [...commands.map((args) => [typo, args] as const), ...commands.slice(0, 2).map((args) => [empty, args] as const)];
    const results = await Promise.all(tried.map(([dir, args]) => playline([...args, '--data-dir', dir])));
    for (const [i, [dir, args]] of tried.entries()) {
      const result = results[i] as CliResult;
      assert.equal(result.status, 1, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stderr, `playline: no Playline data in ${dir} (no playline.db): check --data-dir or PLAYLINE_DATA_DIR\n`);
      assert.equal(result.stdout, '');
    }
    assert.equal(existsSync(typo), false, 'no directory created');
    assert.deepEqual(readdirSync(empty), [], 'no database or key file created');
  });

  test('--json output is pure JSON on stdout, whatever the log level', async () => {
    const dir = join(base, 'json');
    const env = { PLAYLINE_DATA_DIR: dir, PLAYLINE_LOG_LEVEL: 'trace' };
    const workspace = JSON.parse((await playline(['workspaces', 'create', '--name', 'Json', '--json'], env)).stdout) as { id: string };
    const key = JSON.parse((await playline(['keys', 'create', '--owner', workspace.id, '--json'], env)).stdout) as { id: string; secret: string };
    // The readers side by side, then the one that writes.
    const calls = [
      ['workspaces', 'list', '--json'],
      ['keys', 'list', '--owner', workspace.id, '--json'],
      ['sign', '--owner', workspace.id, '--key', key.secret, '--json', '/api/v4/workspace'],
      ['sign-playback', 'movie', '--owner', workspace.id, '--key', key.secret, '--json'],
    ];
    const results = await Promise.all(calls.map((args) => playline(args, env)));
    const revoke = ['keys', 'revoke', key.id, '--owner', workspace.id, '--json'];
    calls.push(revoke);
    results.push(await playline(revoke, env));
    for (const [i, args] of calls.entries()) {
      const result = results[i] as CliResult;
      assert.equal(result.status, 0, result.stderr);
      assert.doesNotThrow(() => JSON.parse(result.stdout), `${args.join(' ')} printed:\n${result.stdout}`);
    }
  });

  test('simulate against a wrong URL names the URL and the cause', async () => {
    const port = await closedPort();
    const refused = await playline(['simulate', '--base-url', `http://127.0.0.1:${port}`, '--credentials', 'a:b', '--duration', '1s']);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}/healthz: connection refused.*\\(ECONNREFUSED\\)`));
    assert.doesNotMatch(refused.stderr, /fetch failed/);

    // https:// to a plain HTTP server: the TLS handshake fails.
    const plain = createHttpServer((_req, res) => res.end('hello'));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const { port: httpPort } = plain.address() as { port: number };
      const tls = await playline(['simulate', '--base-url', `https://127.0.0.1:${httpPort}`, '--credentials', 'a:b', '--duration', '1s']);
      assert.equal(tls.status, 1);
      assert.match(tls.stderr, new RegExp(`cannot reach https://127\\.0\\.0\\.1:${httpPort}/healthz: TLS failed`));
    } finally {
      plain.close();
    }
  });

  test('npm run cluster -- --help prints the usage and starts nothing', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/cluster.ts', '--help'], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^Usage: npm run cluster/);
    const bad = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/cluster.ts', '--instancess', '3'], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /Unknown option '--instancess'[\s\S]*Usage: npm run cluster/);
  });
});

describe('cluster status', () => {
  let fx: ClusterFixture;
  let mute: Server;
  before(async () => {
    fx = await clusterFixture();
    // A TCP server that accepts and never answers: a Redis that hangs.
    mute = createServer(() => undefined);
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    mute?.close();
    await fx?.cleanup();
  });

  const env = (redisUrl: string) => ({ PLAYLINE_DATABASE_URL: fx.databaseUrl, PLAYLINE_REDIS_URL: redisUrl, PLAYLINE_REDIS_PREFIX: fx.redisPrefix, PLAYLINE_SECRET_KEY: CLUSTER_SECRET_KEY });

  test('ends with a clear message when Redis refuses, and times out when it is silent', async (t) => {
    if (fx.skip) return t.skip(fx.skip);
    const refused = `redis://127.0.0.1:${await closedPort()}`;
    const silent = `redis://127.0.0.1:${(mute.address() as { port: number }).port}`;
    const cases = [
      { url: refused, says: 'connect ECONNREFUSED' },
      { url: silent, says: 'within 1 s' },
    ];
    // Side by side: each ends some seconds after its message (the Redis client's own close timers).
    const results = await Promise.all(cases.map(({ url }) => playline(['cluster', 'status', '--timeout', '1'], env(url), { timeoutMs: 30_000 })));
    for (const [i, { url, says }] of cases.entries()) {
      const result = results[i] as CliResult;
      assert.equal(result.status, 1, result.stderr);
      assert.match(result.stderr, new RegExp(`playline: Redis is not reachable at ${url.replace(/\./g, '\\.')}:? .*${says}`));
    }
  });

  test('--json prints the instances as pure JSON while the log goes to stderr', async (t) => {
    if (fx.skip) return t.skip(fx.skip);
    await fx.start();
    const result = await playline(['cluster', 'status', '--json'], { ...env(fx.redisUrl), PLAYLINE_LOG_LEVEL: 'info' });
    assert.equal(result.status, 0, result.stderr);
    const status = JSON.parse(result.stdout) as { mode: string; instances: unknown[] };
    assert.equal(status.mode, 'cluster');
    assert.equal(status.instances.length, 1);
    assert.match(result.stderr, /"level":30/, 'the info log line went to stderr');
  });
});
