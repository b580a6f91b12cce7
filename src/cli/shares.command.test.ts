import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { sharedPlaylineBin } from '../../test/helpers/built-package.js';
import { FakeClock } from '../platform/clock.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

describe('playline shares (the CLI over a running server)', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    // The CLI signs with the real time: the server's fake clock starts at it.
    t = await createTestApp({ clock: new FakeClock(Date.now(), { followRealTime: true }) });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  const cli = async (...args: string[]) =>
    run(process.execPath, [await sharedPlaylineBin(), 'shares', ...args, '--base-url', url, '--owner', t.workspace.id], {
      cwd: root,
      env: { ...process.env, PLAYLINE_API_KEY: t.key.secret },
    });

  test('add, list, remove on the server\'s data; sharing with oneself or an unknown workspace exits 1 with the reason', async () => {
    const them = t.other.workspace.id;
    assert.equal((await cli('list')).stdout, '(none)\n');
    assert.equal((await cli('add', them)).stdout, `shared with ${them}: its URLs with coid=${t.workspace.id} play your assets and live events\n`);
    assert.deepEqual((await t.client.workspace.shares()).map((s) => s.grantee_id), [them], 'the server has it');
    const listed = JSON.parse((await cli('list', '--json')).stdout) as Array<{ grantee_id: string; workspace_id: string }>;
    assert.deepEqual(listed.map((s) => [s.workspace_id, s.grantee_id]), [[t.workspace.id, them]]);
    assert.match((await cli('list')).stdout, new RegExp(`^grantee_id +shared_at\\n${them}  \\d{4}-\\d\\d-\\d\\dT`));
    assert.equal((await cli('remove', them)).stdout, `no longer shared with ${them}\n`);
    assert.deepEqual(await t.client.workspace.shares(), []);

    await assert.rejects(cli('add', t.workspace.id), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr, /^playline: 422 unprocessable: A workspace always plays its own content/m);
      return true;
    });
    await assert.rejects(cli('add', 'f'.repeat(32)), (err: { code: number; stderr: string }) => {
      assert.match(err.stderr, /^playline: 404 not_found: Workspace f{32} does not exist$/m);
      return true;
    });
    await assert.rejects(cli('remove', them), (err: { code: number; stderr: string }) => {
      assert.match(err.stderr, /^playline: 404 not_found: Your content is not shared with workspace /m);
      return true;
    });
  });

  test('--help states the model: private by default, coid, private-asset entries', async () => {
    const help = await run(process.execPath, [await sharedPlaylineBin(), 'shares', '--help'], { cwd: root });
    assert.match(help.stdout, /Usage: playline shares \[options\] \[command\]/);
    assert.match(help.stdout, /list \[options\] +List the workspaces your content is shared/);
    assert.match(help.stdout, /Content is private to its workspace\./);
    const add = await run(process.execPath, [await sharedPlaylineBin(), 'shares', 'add', '--help'], { cwd: root });
    assert.match(add.stdout, /Usage: playline shares add \[options\] <workspace_id>/);
    assert.match(add.stdout, /playback error 102/);
  });
});
