import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { sharedPlaylineBin } from '../../test/helpers/built-package.js';
import { FakeClock } from '../platform/clock.js';
import { slicerBody } from '../modules/managed-slicers/slicer-fixtures.test-support.js';
import type { WorkspaceUsageView } from '../modules/workspaces/workspace-usage.schema.js';
import { formatBytes } from './usage.command.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

describe('playline usage (the CLI over a running server)', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    // The CLI signs with the real time: the server's fake clock starts at it.
    t = await createTestApp({ clock: new FakeClock(Date.now(), { followRealTime: true }), start: false, env: { PLAYLINE_REGIONS: 'eu-central-1', PLAYLINE_QUOTA_SLICERS: '5', PLAYLINE_QUOTA_STORAGE_BYTES: String(3 * 1024 ** 3) } });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  const cli = async (...args: string[]) =>
    run(process.execPath, [await sharedPlaylineBin(), 'usage', ...args, '--base-url', url, '--owner', t.workspace.id], { cwd: root, env: { ...process.env, PLAYLINE_API_KEY: t.key.secret } });

  test('prints each quota with used, limit and share; --json the API answer (the SDK\'s workspace.usage())', async () => {
    await t.client.managedSlicers.create(slicerBody('one'));
    await t.client.managedSlicers.create(slicerBody('two'));
    const { stdout } = await cli();
    const lines = stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^quota\s+used\s+limit\s+share$/);
    assert.match(stdout, /^slicers\s+2\s+5\s+40%$/m);
    assert.match(stdout, /^storage_bytes\s+0 B\s+3\.00 GiB\s+0%$/m);
    for (const quota of ['assets', 'targets', 'schedules', 'active_pushes']) assert.match(stdout, new RegExp(`^${quota}\\s+0\\s+\\d+\\s+0%$`, 'm'));

    const json = JSON.parse((await cli('--json')).stdout) as WorkspaceUsageView;
    assert.deepEqual(json, await t.client.workspace.usage());
    assert.deepEqual(json.quotas.slicers, { used: 2, limit: 5 });
  });

  test('bytes are shown in binary units', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(1023), '1023 B');
    assert.equal(formatBytes(1536), '1.50 KiB');
    assert.equal(formatBytes(100 * 1024 ** 3), '100.0 GiB');
  });
});
