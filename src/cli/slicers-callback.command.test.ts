import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { playline } from '../../test/helpers/cli.js';
import { FakeClock } from '../platform/clock.js';
import { startLocalReceiver, type LocalReceiver } from '../platform/outbound/testing/local-receiver.js';
import { runAllTasks } from '../modules/managed-slicers/slicer-fixtures.test-support.js';
import type { ManagedSlicerView } from '../modules/managed-slicers/managed-slicers.schema.js';
import type { SettingsView } from '../modules/error-reporting/error-reporting.schema.js';

describe('playline slicers list|create|show|delete and callback set|test (the built CLI over a running server, issue 36)', () => {
  let t: TestApp;
  let clock: FakeClock;
  let url: string;
  let receiver: LocalReceiver;
  before(async () => {
    // The CLI signs with the real time: the server's fake clock starts at it (tasks run by hand).
    clock = new FakeClock(Date.now());
    t = await createTestApp({ clock, env: { PLAYLINE_SLICER_PROVISION_MS: '2000', PLAYLINE_REGIONS: 'eu-central-1', PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' } });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const cli = (...args: string[]) => playline([...args, '--base-url', url, '--owner', t.workspace.id], { PLAYLINE_API_KEY: t.key.secret });

  test('create starts a CREATE task; list shows the slicer without its ingest URL; show prints it; delete starts a DELETE task', async () => {
    const created = await cli('slicers', 'create', '--name', 'Main stage', '--region', 'eu-central-1', '--protocol', 'srt', '--output-profile', 'hd-720p', '--no-record');
    assert.equal(created.status, 0, created.stderr);
    const id = /^slicer ([0-9a-z-]+) \(Main stage\): provisioning \(task [0-9a-f-]{36}, CREATE (PENDING|IN_PROGRESS)\)$/m.exec(created.stderr)?.[1];
    assert.ok(id, created.stderr);
    assert.match(created.stderr, new RegExp(`its ingest URL is given once the CREATE task completed: playline slicers show ${id}`));
    const saved = await t.client.managedSlicers.get(id);
    assert.deepEqual([saved.name, saved.ingest_protocol, saved.output_profile, saved.record], ['Main stage', 'srt', 'hd-720p', false]);
    await runAllTasks(t.runtime.managedSlicers, clock, t.workspace.id);
    const ingest = (await t.client.managedSlicers.get(id)).ingest_url ?? '';
    assert.match(ingest, /^srt:\/\/.+passphrase=[A-Za-z0-9_-]{32}/);

    const listed = await cli('slicers', 'list');
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${id}\\s+Main stage\\s+running\\s+srt\\s+eu-central-1\\s+hd-720p\\s+false\\s+CREATE COMPLETED$`, 'm'));
    assert.ok(!listed.stdout.includes(ingest), 'the list carries no stream key');

    const shown = await cli('slicers', 'show', id);
    assert.equal(shown.status, 0, shown.stderr);
    assert.ok(shown.stdout.includes(ingest), shown.stdout);
    assert.equal((JSON.parse((await cli('slicers', 'show', id, '--json')).stdout) as ManagedSlicerView).id, id);

    const deleted = await cli('slicers', 'delete', id);
    assert.equal(deleted.status, 0, deleted.stderr);
    assert.match(deleted.stdout, new RegExp(`^slicer ${id} \\(Main stage\\): deleting \\(task [0-9a-f-]{36}, DELETE (PENDING|IN_PROGRESS)\\)$`, 'm'));
    await runAllTasks(t.runtime.managedSlicers, clock, t.workspace.id);
    const missing = await cli('slicers', 'show', 'no-such-slicer');
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /^playline: 404 not_found: /m);
  });

  test('create refuses an unknown protocol before any call', async () => {
    const out = await cli('slicers', 'create', '--name', 'x', '--region', 'eu-central-1', '--protocol', 'ftp', '--output-profile', 'hd-720p');
    assert.notEqual(out.status, 0);
    assert.match(out.stderr, /one of rtmp, srt, rist, zixi, hls/);
    assert.equal((await t.client.managedSlicers.list()).page.items.filter((s) => s.name === 'x').length, 0);
  });

  test('callback set saves a URL that answers 200; callback test reports what it met; a failing URL is not saved, exit 1', async () => {
    receiver.setBehaviour({ kind: 'status', status: 200 });
    const set = await cli('callback', 'set', receiver.url);
    assert.equal(set.status, 0, set.stderr);
    assert.match(set.stdout, new RegExp(`^callback_url\\s+${receiver.url.replace(/[.?*+]/g, '\\$&')}$`, 'm'));
    assert.match(set.stdout, /^signing_secret\s+\(hidden: --json prints it\)$/m);
    assert.ok(!set.stdout.includes('whsec_'), 'the signing secret only with --json');
    assert.equal((await t.client.errorReporting.getSettings()).callback_url, receiver.url);

    const tested = await cli('callback', 'test');
    assert.equal(tested.status, 0, tested.stderr);
    assert.match(tested.stdout, /^passed\s+true$/m);
    assert.match(tested.stdout, /^status\s+200$/m);

    receiver.setBehaviour({ kind: 'status', status: 500 });
    const failing = await cli('callback', 'test', '--json');
    assert.equal(failing.status, 1);
    assert.equal((JSON.parse(failing.stdout) as { passed: boolean }).passed, false);
    assert.match(failing.stderr, /did not pass \(\w+ 500\)/);

    const other = `${receiver.url}?other=1`;
    const refused = await cli('callback', 'set', other);
    assert.equal(refused.status, 1, refused.stdout);
    assert.match(refused.stdout, /^status\s+500$/m);
    assert.match(refused.stderr, /^playline: 422 [a-z_]+: .*; the callback URL was not saved$/m);
    const settings: SettingsView = await t.client.errorReporting.getSettings();
    assert.equal(settings.callback_url, receiver.url, 'the failing URL was not saved');
  });
});
