import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { sharedPlaylineBin } from '../../test/helpers/built-package.js';
import { FakeClock } from '../platform/clock.js';
import type { ManagedSlicerView } from '../modules/managed-slicers/managed-slicers.schema.js';
import { runAllTasks, slicerBody } from '../modules/managed-slicers/slicer-fixtures.test-support.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const SRT = /^srt:\/\/eu-central-1\.ingest\.playline\.invalid:9000\?passphrase=([A-Za-z0-9_-]{32})&pbkeylen=16$/;

describe('playline slicers rotate-key (the CLI over a running server)', () => {
  let t: TestApp;
  let clock: FakeClock;
  let url: string;
  before(async () => {
    // The CLI signs with the real time: the server's fake clock starts at it.
    clock = new FakeClock(Date.now(), { followRealTime: true });
    t = await createTestApp({ clock, env: { PLAYLINE_SLICER_PROVISION_MS: '2000', PLAYLINE_REGIONS: 'eu-central-1' } });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  const cli = async (...args: string[]) =>
    run(process.execPath, [await sharedPlaylineBin(), 'slicers', ...args, '--base-url', url, '--owner', t.workspace.id], {
      cwd: root,
      env: { ...process.env, PLAYLINE_API_KEY: t.key.secret },
    });

  test('prints the new ingest URL alone on stdout; --json the slicer with its RESTART task; an unknown slicer exits 1', async () => {
    const slicer = await t.client.managedSlicers.create({ ...slicerBody(), ingest_protocol: 'srt' });
    await runAllTasks(t.runtime.managedSlicers, clock, t.workspace.id);
    const before = (await t.client.managedSlicers.get(slicer.id)).ingest_url ?? '';
    assert.match(before, SRT);

    const rotated = await cli('rotate-key', slicer.id);
    const printed = rotated.stdout.trim();
    assert.match(printed, SRT);
    assert.notEqual(printed, before);
    assert.equal((await t.client.managedSlicers.get(slicer.id)).ingest_url, printed);
    assert.match(rotated.stderr, /restarts with the new key \(task [0-9a-f-]{36}, (PENDING|IN_PROGRESS)\); encoders using the old key are disconnected/);
    assert.ok(!rotated.stderr.includes(printed), 'the URL only on stdout');
    await runAllTasks(t.runtime.managedSlicers, clock, t.workspace.id);

    const json = JSON.parse((await cli('rotate-key', slicer.id, '--json')).stdout) as ManagedSlicerView;
    assert.equal(json.task.operation, 'RESTART');
    assert.notEqual(json.ingest_url, printed);
    await runAllTasks(t.runtime.managedSlicers, clock, t.workspace.id);

    await assert.rejects(cli('rotate-key', 'no-such-slicer'), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr, /^playline: 404 not_found: No managed slicer no-such-slicer$/m);
      return true;
    });
  });

  test('update --dvr-window-s sets the slicer\'s DVR window; a value past the server\'s bound or not whole seconds is refused', async () => {
    const slicer = await t.client.managedSlicers.create({ ...slicerBody('dvr'), ingest_protocol: 'srt' });
    const out = await cli('update', slicer.id, '--dvr-window-s', '900');
    assert.match(out.stdout, new RegExp(`^slicer ${slicer.id}: dvr_window_s 900, record true \\(task [0-9a-f-]{36}, UPDATE (PENDING|IN_PROGRESS)\\)$`, 'm'));
    assert.equal((await t.client.managedSlicers.get(slicer.id)).dvr_window_s, 900);
    await assert.rejects(cli('update', slicer.id, '--dvr-window-s', '99999'), (err: { code: number; stderr: string }) => err.code === 1 && /400 validation_failed/.test(err.stderr));
    await assert.rejects(cli('update', slicer.id, '--dvr-window-s', '1h'), (err: { code: number; stderr: string }) => err.code !== 0 && /whole seconds/.test(err.stderr));
    assert.equal((await t.client.managedSlicers.get(slicer.id)).dvr_window_s, 900);
    await runAllTasks(t.runtime.managedSlicers, clock, t.workspace.id);
  });

  test('update --no-record stops recording live events, --record starts it again; update without a setting is refused before any call', async () => {
    const slicer = await t.client.managedSlicers.create({ ...slicerBody('rec'), ingest_protocol: 'srt' });
    assert.equal(slicer.record, true, 'recording is on by default');
    assert.match((await cli('update', slicer.id, '--no-record')).stdout, /, record false \(task /);
    assert.equal((await t.client.managedSlicers.get(slicer.id)).record, false);
    await runAllTasks(t.runtime.managedSlicers, clock, t.workspace.id);
    assert.match((await cli('update', slicer.id, '--record')).stdout, /, record true \(task /);
    assert.equal((await t.client.managedSlicers.get(slicer.id)).record, true);
    await assert.rejects(cli('update', slicer.id), (err: { code: number; stderr: string }) => err.code === 1 && /give a setting to change/.test(err.stderr));
    await runAllTasks(t.runtime.managedSlicers, clock, t.workspace.id);
  });

  test('--help says what a rotation does', async () => {
    const help = await run(process.execPath, [await sharedPlaylineBin(), 'slicers', 'rotate-key', '--help'], { cwd: root });
    assert.match(help.stdout, /Usage: playline slicers rotate-key \[options\] <id>/);
    assert.match(help.stdout, /disconnecting an encoder that uses the old one/);
    assert.match(help.stdout, /SRT passphrase, RIST secret, RTMP stream name, hls push/);
  });
});
