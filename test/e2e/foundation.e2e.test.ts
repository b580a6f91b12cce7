import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PlaylineClient } from '../../src/client/index.js';
import { startServerProcess } from '../helpers/server-process.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = (args: string[], env: Record<string, string>) =>
  execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });

describe('the real server process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-e2e-'));
  const env = { PLAYLINE_DATA_DIR: dataDir };
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('first start prints a bootstrap key and a command that answers 200; a CLI key survives kill -9', async () => {
    const first = await startServerProcess(env);
    try {
      const out = first.output();
      const owner = /Workspace ID: ([0-9a-f]{32})/.exec(out)?.[1];
      const key = /API key:\s+(\S+)/.exec(out)?.[1];
      const curl = /^\s+(curl -s '.+')$/m.exec(out)?.[1];
      assert.ok(owner && key && curl, `banner incomplete:\n${out}`);
      const answer = JSON.parse(execFileSync('sh', ['-c', `${curl} -w '\\n%{http_code}'`], { encoding: 'utf8' }).replace(/\n(\d{3})$/, ',"_status":$1}').replace(/},"_status"/, ',"_status"'));
      assert.equal(answer._status, 200);
      assert.equal(answer.id, owner);
      assert.equal(statSync(join(dataDir, 'secret.key')).mode & 0o777, 0o600, 'the key file is private');

      // The CLI works on the same data dir while the server runs.
      const created = JSON.parse(cli(['keys', 'create', '--owner', owner, '--label', 'e2e', '--json'], env)) as { id: string; secret: string };
      const client = new PlaylineClient({ baseUrl: first.url, owner, apiKey: created.secret });
      assert.equal((await client.workspace.get()).id, owner);
      const listed = JSON.parse(cli(['keys', 'list', '--owner', owner, '--json'], env)) as { id: string; secret?: string }[];
      assert.deepEqual(listed.map((k) => k.id).includes(created.id), true);
      assert.ok(listed.every((k) => k.secret === undefined), 'listing never prints secrets');

      await first.kill9();
      const second = await startServerProcess(env);
      try {
        assert.doesNotMatch(second.output(), /API key:/, 'no second bootstrap');
        const again = new PlaylineClient({ baseUrl: second.url, owner, apiKey: created.secret });
        assert.equal((await again.workspace.get()).id, owner);
        // Revoked through the CLI while running: refused within the key cache's second.
        cli(['keys', 'revoke', created.id, '--owner', owner, '--json'], env);
        // Another process changed the keys: the server's key cache picks it up within ~1 s.
        const deadline = Date.now() + 10_000;
        let refused: unknown;
        while (!refused && Date.now() < deadline) {
          refused = await again.workspace.get().then(() => undefined, (err: unknown) => err);
          if (!refused) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.deepEqual({ status: (refused as { status?: number })?.status, code: (refused as { code?: string })?.code }, { status: 401, code: 'key_revoked' });
        assert.equal(await second.stop(), 0, 'SIGTERM shuts down cleanly');
      } finally {
        second.child.kill('SIGKILL');
      }
    } finally {
      first.child.kill('SIGKILL');
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
