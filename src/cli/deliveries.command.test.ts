import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { eventually } from '../../test/helpers/eventually.js';
import { sharedPlaylineBin } from '../../test/helpers/built-package.js';
import { FakeClock } from '../platform/clock.js';
import { startLocalReceiver, type LocalReceiver } from '../platform/outbound/testing/local-receiver.js';
import type { DeliveriesView, LoggedAttemptCollectionView, LoggedAttemptDetailView } from '../modules/error-reporting/error-reporting.schema.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

describe('playline deliveries and playline callback (the CLI over a running server)', () => {
  let t: TestApp;
  let url: string;
  let receiver: LocalReceiver;
  before(async () => {
    // The CLI signs with the real time: the server's fake clock follows it. The endpoint's pause after
    // the failure is made an hour long, so it lasts until resumed however slow the machine is.
    t = await createTestApp({
      clock: new FakeClock(Date.now(), { followRealTime: true }),
      env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_CALLBACK_BACKOFF_MS: '3600000', PLAYLINE_CALLBACK_BACKOFF_MAX_MS: '3600000' },
    });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
    await t.client.errorReporting.putSettings({ callback_url: receiver.url });
    receiver.setBehaviour({ kind: 'status', status: 500 });
    t.runtime.errorReports.submit({ owner: t.workspace.id, url: 'https://edge.example.com/x.m3u8', ip: '203.0.113.7', code: 404, ua: 'P/1', msg: 'Not found', timestamp: 1_763_719_200, errorCode: 100 });
    await eventually(async () => (await t.client.errorReporting.listAttempts()).total_items === 1, 'the failed attempt logged');
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const cli = async (...args: string[]) =>
    run(process.execPath, [await sharedPlaylineBin(), ...args, '--base-url', url, '--owner', t.workspace.id], {
      cwd: root,
      env: { ...process.env, PLAYLINE_API_KEY: t.key.secret },
    });

  test('deliveries list, show and resend; callback resume', { timeout: 600_000 }, async () => {
    const listed = JSON.parse((await cli('deliveries', 'list', '--outcome', 'non_200', '--json')).stdout) as LoggedAttemptCollectionView;
    assert.equal(listed.total_items, 1);
    const failed = listed.items[0];
    assert.ok(failed);
    assert.equal(failed.status, 500);

    const table = await cli('deliveries', 'list');
    assert.match(table.stdout, new RegExp(`^${failed.id}\\s+\\S+\\s+non_200\\s+500`, 'm'));

    const shown = await cli('deliveries', 'show', failed.id);
    assert.match(shown.stdout, /webhook-signature\s+v1,/);
    assert.match(shown.stdout, /"msg":"Not found"/);

    receiver.setBehaviour({ kind: 'status', status: 200 });
    const resent = JSON.parse((await cli('deliveries', 'resend', failed.id, '--json')).stdout) as LoggedAttemptDetailView;
    assert.equal(resent.outcome, 'delivered');
    assert.equal(resent.resend_of, failed.id);
    assert.equal(receiver.received.at(-1)?.body, resent.request.body);

    assert.ok(((await t.client.errorReporting.deliveries()).endpoint?.paused_until ?? 0) > t.clock.now(), 'still paused after the failure');
    const resumed = JSON.parse((await cli('callback', 'resume', '--json')).stdout) as { paused_until: string | null; callback_url: string };
    assert.equal(resumed.paused_until, null);
    assert.equal(resumed.callback_url, receiver.url);
    const state: DeliveriesView = await t.client.errorReporting.deliveries();
    assert.equal(state.endpoint?.paused_until, null);
  });

  test('a resend that is not answered 200 exits 1 and names the outcome', { timeout: 600_000 }, async () => {
    receiver.setBehaviour({ kind: 'status', status: 503 });
    const id = (await t.client.errorReporting.listAttempts()).items[0]?.id ?? '';
    await assert.rejects(cli('deliveries', 'resend', id), (e: { code?: number; stderr?: string }) => e.code === 1 && /non_200 \(HTTP 503\)/.test(e.stderr ?? ''));
  });

  test('callback status shows the dropped counts by reason; deliveries list --outcome dropped lists them', { timeout: 600_000 }, async () => {
    receiver.setBehaviour({ kind: 'status', status: 500 });
    const n = receiver.count();
    const report = { owner: t.workspace.id, url: 'https://edge.example.com/y.m3u8', ip: '203.0.113.7', code: 403, ua: 'P/1', msg: 'Forbidden', timestamp: 1_763_719_200, errorCode: 100 };
    t.runtime.errorReports.submit(report);
    await receiver.waitFor(n + 1);
    await eventually(async () => ((await t.client.errorReporting.deliveries()).endpoint?.paused_until ?? 0) > t.clock.now(), 'paused');
    for (let i = 0; i < 3; i++) assert.equal(t.runtime.errorReports.submit(report), 'paused');

    const status = JSON.parse((await cli('callback', 'status', '--json')).stdout) as { dropped: Record<string, number> };
    assert.deepEqual(status.dropped, { throttled: 0, paused: 3, discarded: 0, overloaded: 0 });
    const text = await cli('callback', 'status');
    assert.match(text.stdout, /^dropped\s+3 \(throttled 0, paused 3, discarded 0, overloaded 0\)$/m);
    const help = await cli('callback', 'status', '--help');
    assert.match(help.stdout, /dropped/);

    const listed = JSON.parse((await cli('deliveries', 'list', '--outcome', 'dropped', '--json')).stdout) as LoggedAttemptCollectionView;
    assert.equal(listed.total_items, 3);
    assert.deepEqual(listed.items.map((a) => a.detail), ['paused', 'paused', 'paused']);
  });
});
