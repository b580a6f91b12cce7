import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PlaylineClient } from '../../src/client/index.js';
import { sharedPlaylineBin } from '../helpers/built-package.js';
import { eventually } from '../helpers/eventually.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = await sharedPlaylineBin();
const cli = (args: string[], env: Record<string, string>) =>
  execFileSync(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });

describe('the real server process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-e2e-'));
  const env = { PLAYLINE_DATA_DIR: dataDir };
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  // One server history, in named steps: a failure names the step (each needs the ones before it).
  test('first start, the CLI beside the running server, kill -9, restart, revocation, SIGTERM', async (t) => {
    const servers: ServerProcess[] = [];
    let owner = '';
    let created: { id: string; secret: string } | undefined;
    try {
      const first = await startServerProcess(env);
      servers.push(first);

      await t.test('first start prints a bootstrap workspace, its key and a curl command that answers 200', () => {
        const out = first.output();
        owner = /Workspace ID: ([0-9a-f]{32})/.exec(out)?.[1] ?? '';
        const key = /API key:\s+(\S+)/.exec(out)?.[1];
        const curl = /^\s+(curl -s '.+')$/m.exec(out)?.[1];
        assert.ok(owner && key && curl, `banner incomplete:\n${out}`);
        const answer = JSON.parse(execFileSync('sh', ['-c', `${curl} -w '\\n%{http_code}'`], { encoding: 'utf8' }).replace(/\n(\d{3})$/, ',"_status":$1}').replace(/},"_status"/, ',"_status"'));
        assert.equal(answer._status, 200);
        assert.equal(answer.id, owner);
      });

      await t.test('the secret key file is private (0600)', () => {
        assert.equal(statSync(join(dataDir, 'secret.key')).mode & 0o777, 0o600);
      });

      await t.test('a key created by the CLI on the same data dir works at once; listing never prints secrets', async () => {
        assert.ok(owner, 'needs the bootstrap workspace');
        created = JSON.parse(cli(['keys', 'create', '--owner', owner, '--label', 'e2e', '--json'], env)) as { id: string; secret: string };
        const client = new PlaylineClient({ baseUrl: first.url, owner, apiKey: created.secret });
        assert.equal((await client.workspace.get()).id, owner);
        const listed = JSON.parse(cli(['keys', 'list', '--owner', owner, '--json'], env)) as { id: string; secret?: string }[];
        assert.deepEqual(listed.map((k) => k.id).includes(created.id), true);
        assert.ok(listed.every((k) => k.secret === undefined), 'listing never prints secrets');
      });

      await first.kill9();
      const second = await startServerProcess(env);
      servers.push(second);
      const again = () => new PlaylineClient({ baseUrl: second.url, owner, apiKey: created?.secret ?? '' });

      await t.test('after kill -9 and a restart: no second bootstrap, and the CLI key still works', async () => {
        assert.ok(created, 'needs the CLI key');
        assert.doesNotMatch(second.output(), /API key:/, 'no second bootstrap');
        assert.equal((await again().workspace.get()).id, owner);
      });

      await t.test('a key revoked by the CLI while the server runs is refused (key_revoked)', async () => {
        assert.ok(created, 'needs the CLI key');
        cli(['keys', 'revoke', created.id, '--owner', owner, '--json'], env);
        // Another process changed the keys: the server's key cache follows within its bound
        // (2 s at most, pinned by key-ring.test.ts on a fake clock); here only that it does.
        let refused: unknown;
        await eventually(async () => (refused = await again().workspace.get().then(() => undefined, (err: unknown) => err)) !== undefined, 'the revoked key is refused', 30_000);
        assert.deepEqual({ status: (refused as { status?: number })?.status, code: (refused as { code?: string })?.code }, { status: 401, code: 'key_revoked' });
      });

      await t.test('SIGTERM shuts down cleanly (exit code 0)', async () => {
        assert.equal(await second.stop(), 0);
      });
    } finally {
      for (const server of servers) server.child.kill('SIGKILL');
    }
  });

  test('a bad setting stops the server with a message naming it', () => {
    assert.throws(
      () => cli(['serve', '--port', 'eighty'], env),
      (err: { stderr?: string; status?: number }) => {
        assert.equal(err.status, 1);
        assert.match(String(err.stderr), /PLAYLINE_PORT \(--port\)/);
        return true;
      },
    );
  });
});
