import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const runner = fileURLToPath(new URL('../../scripts/cluster.ts', import.meta.url));
const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * `npm run cluster` as a user runs it, on a database that does not exist yet (issue 36: it crashed
 * with a stack trace although its help says "created if missing") and with every instance given
 * the server's Node flags (each warned of the runner's missing --max-semi-space-size).
 */
describe('npm run cluster on a database that does not exist yet', () => {
  const database = `playline_runner_${randomBytes(6).toString('hex')}`;
  const scratch = mkdtempSync(join(tmpdir(), 'playline-cluster-runner-'));
  let child: ChildProcess | undefined;
  let output = '';

  before(async () => {
    child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), runner, '--instances', '1', '--port', '0'], {
      cwd: scratch,
      env: {
        ...process.env,
        PLAYLINE_DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${database}`,
        PLAYLINE_REDIS_PREFIX: `${database}:`,
        PLAYLINE_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => (output += chunk.toString());
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
  });
  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`drop database if exists "${database}" with (force)`);
    await admin.end();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('creates the database, starts the instance without the flag warning, and Ctrl-C stops it with exit 0', { timeout: 300_000 }, async () => {
    const proc = child as ChildProcess;
    const exited = once(proc, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    await new Promise<void>((resolve, reject) => {
      const look = () => {
        if (output.includes('Ctrl-C stops every instance.')) resolve();
      };
      proc.stdout?.on('data', look);
      void exited.then(([code, signal]) => reject(new Error(`the runner exited (${signal ?? code}) before the cluster was up:\n${output}`)));
    });
    assert.match(output, new RegExp(`Created the database 127\\.0\\.0\\.1:5432/${database}`));
    assert.match(output, /instance 1: http:\/\/127\.0\.0\.1:\d+/);
    assert.doesNotMatch(output, /started without node/);
    assert.doesNotMatch(output, /\n\s+at /, 'no stack trace');
    proc.kill('SIGINT');
    const [code] = await exited;
    assert.equal(code, 0, output);
  });
});
