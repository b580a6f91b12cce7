import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../../../test/helpers/test-app.js';
import type { TestApp } from '../../../test/helpers/test-app.js';
import { eventually } from '../../../test/helpers/eventually.js';
import type { FakeClock } from '../../platform/clock.js';
import { PlaylineApiError } from '../../client/index.js';
import { playbackError, verifies } from './testing/logged-attempts.js';
import { startLocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import type { LocalReceiver } from '../../platform/outbound/testing/local-receiver.js';

const env = { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' };
const opts = { timeout: 30_000 };

describe('the delivery log, resend and resume', () => {
  let t: TestApp;
  let receiver: LocalReceiver;
  let secret: string;

  before(async () => {
    t = await createTestApp({ env });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
    secret = (await t.client.errorReporting.putSettings({ callback_url: receiver.url })).signing_secret;
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const total = async () => (await t.client.errorReporting.listAttempts()).total_items;

  test('every attempt is logged with its payload, exact body and signature headers; newest first', opts, async () => {
    for (const code of [401, 403, 404]) {
      t.runtime.errorReports.submit(playbackError(t.workspace.id, code));
      await receiver.waitFor(receiver.count() + 1);
      (t.clock as FakeClock).advance(1000);
    }
    await eventually(async () => (await total()) === 3, 'three attempts logged');
    const list = await t.client.errorReporting.listAttempts();
    assert.equal(list['@type'], 'Collection');
    assert.deepEqual(list.items.map((a) => a.outcome), ['delivered', 'delivered', 'delivered']);
    const first = list.items[0];
    const last = list.items[2];
    assert.ok(first && last && first.ts >= last.ts, 'newest first');
    assert.equal(first.status, 200);
    assert.equal(first.url, receiver.url);
    assert.match(first.ts_iso, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const detail = await t.client.errorReporting.getAttempt(first.id);
    assert.equal(detail.payload.code, 404, 'the newest is the last report submitted');
    assert.equal(detail.payload.owner, t.workspace.id);
    // What was logged is what the receiver got, byte for byte, headers included.
    const got = receiver.received.find((r) => r.headers['webhook-id'] === detail.webhook_id);
    assert.ok(got, 'the receiver got this webhook id');
    assert.equal(detail.request.body, got.body);
    assert.equal(detail.request.headers['webhook-signature'], got.headers['webhook-signature']);
    assert.equal(detail.request.headers['webhook-timestamp'], got.headers['webhook-timestamp']);
    assert.ok(verifies(secret, detail), 'the logged signature verifies with the signing secret');
    assert.ok(!JSON.stringify(detail).includes(secret), 'the secret is never shown with an attempt');
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /playline_error_reporting_log_queued 0/);
    assert.match(metrics.body, /playline_error_reporting_log_dropped_total\{reason="queue_full"\} 0/);
  });

  test('pages with a cursor, filters by outcome, and answers 400 for a bad cursor', opts, async () => {
    const page1 = await t.client.errorReporting.listAttempts({ limit: 2 });
    assert.equal(page1.items.length, 2);
    assert.equal(page1.total_items, 3);
    assert.ok(page1.next_cursor);
    const page2 = await t.client.errorReporting.listAttempts({ limit: 2, cursor: page1.next_cursor });
    assert.equal(page2.items.length, 1);
    assert.equal(page2.next_cursor, null);
    const all = [...page1.items, ...page2.items].map((a) => a.id);
    assert.equal(new Set(all).size, 3, 'no attempt twice across pages');
    const raw = await t.client.core.send('GET', '/api/v4/error-reporting/attempts', { query: { limit: 2 } });
    assert.match(raw.headers.link ?? '', /rel="next"/);
    assert.equal((await t.client.errorReporting.listAttempts({ outcome: 'non_200' })).total_items, 0);
    assert.equal((await t.client.errorReporting.listAttempts({ outcome: 'delivered' })).total_items, 3);
    const bad = await t.client.core.send('GET', '/api/v4/error-reporting/attempts', { query: { cursor: 'nope' } });
    assert.equal(bad.status, 400);
    const badOutcome = await t.client.core.send('GET', '/api/v4/error-reporting/attempts', { query: { outcome: 'lost' } });
    assert.equal(badOutcome.status, 400);
  });

  test('a non-200 pauses the endpoint; resend sends the logged report again, signed anew, and logs the new attempt', opts, async () => {
    receiver.setBehaviour({ kind: 'status', status: 500 });
    const n = receiver.count();
    t.runtime.errorReports.submit(playbackError(t.workspace.id, 410));
    await receiver.waitFor(n + 1);
    await eventually(async () => (await t.client.errorReporting.listAttempts({ outcome: 'non_200' })).total_items === 1, 'the failure logged');
    const failed = (await t.client.errorReporting.listAttempts({ outcome: 'non_200' })).items[0];
    assert.ok(failed);
    assert.equal(failed.status, 500);
    assert.equal(failed.detail, 'HTTP 500');
    const deliveries = await t.client.errorReporting.deliveries();
    assert.ok((deliveries.endpoint?.paused_until ?? 0) > t.clock.now(), 'paused after the failure');

    receiver.setBehaviour({ kind: 'status', status: 200 });
    const resent = await t.client.errorReporting.resend(failed.id);
    assert.equal(resent.outcome, 'delivered', 'sent while paused: an operator asked for it');
    assert.equal(resent.status, 200);
    assert.equal(resent.resend_of, failed.id);
    assert.notEqual(resent.id, failed.id);
    assert.equal(resent.webhook_id, failed.webhook_id, 'a resent message keeps its webhook-id');
    const original = await t.client.errorReporting.getAttempt(failed.id);
    assert.equal(resent.request.body, original.request.body, 'the same report');
    assert.ok(verifies(secret, resent));
    const got = receiver.received.at(-1);
    assert.equal(got?.body, original.request.body);
    assert.equal(got?.headers['webhook-signature'], resent.request.headers['webhook-signature']);
    assert.equal((await t.client.errorReporting.listAttempts()).items[0]?.id, resent.id, 'listed, newest first');
    assert.ok(((await t.client.errorReporting.deliveries()).endpoint?.paused_until ?? 0) > t.clock.now(), 'a resend leaves the pause alone');

    // Later (webhook-timestamp is in seconds), a resend carries the time it was signed at.
    (t.clock as FakeClock).advance(5000);
    const later = await t.client.errorReporting.resend(failed.id);
    assert.equal(later.request.headers['webhook-timestamp'], String(Math.floor(t.clock.now() / 1000)), 'signed anew');
    assert.notEqual(later.request.headers['webhook-timestamp'], original.request.headers['webhook-timestamp']);
    assert.notEqual(later.request.headers['webhook-signature'], original.request.headers['webhook-signature']);
    assert.ok(verifies(secret, later));
    // Pause the endpoint again for the next test.
    receiver.setBehaviour({ kind: 'status', status: 500 });
    const m = receiver.count();
    t.runtime.errorReports.submit(playbackError(t.workspace.id, 410));
    await receiver.waitFor(m + 1);
    await eventually(async () => ((await t.client.errorReporting.deliveries()).endpoint?.paused_until ?? 0) > t.clock.now(), 'paused again');
    receiver.setBehaviour({ kind: 'status', status: 200 });
  });

  test('resume ends the pause at once: the next report is sent', opts, async () => {
    assert.equal(t.runtime.errorReports.submit(playbackError(t.workspace.id, 429)), 'paused');
    const resumed = await t.client.errorReporting.resume();
    assert.equal(resumed.endpoint?.paused_until, null);
    assert.equal(resumed.endpoint?.consecutive_failures, 0);
    const n = receiver.count();
    assert.equal(t.runtime.errorReports.submit(playbackError(t.workspace.id, 429)), 'queued');
    await receiver.waitFor(n + 1);
  });

  test('a passing test of the saved callback resumes it too; a test of another URL does not', opts, async () => {
    receiver.setBehaviour({ kind: 'status', status: 503 });
    const n = receiver.count();
    t.runtime.errorReports.submit(playbackError(t.workspace.id, 500));
    await receiver.waitFor(n + 1);
    await eventually(async () => ((await t.client.errorReporting.deliveries()).endpoint?.paused_until ?? 0) > t.clock.now(), 'paused');
    receiver.setBehaviour({ kind: 'status', status: 200 });
    const elsewhere = await startLocalReceiver({ kind: 'status', status: 200 });
    try {
      assert.equal((await t.client.errorReporting.test(elsewhere.url)).passed, true);
      assert.ok(((await t.client.errorReporting.deliveries()).endpoint?.paused_until ?? 0) > t.clock.now(), 'another URL says nothing about this one');
    } finally {
      await elsewhere.close();
    }
    assert.equal((await t.client.errorReporting.test()).passed, true);
    assert.equal((await t.client.errorReporting.deliveries()).endpoint?.paused_until, null);
    assert.equal(t.runtime.errorReports.submit(playbackError(t.workspace.id, 500)), 'queued');
  });

  test('another workspace sees none of these attempts and cannot read or resend them (404)', opts, async () => {
    const mine = (await t.client.errorReporting.listAttempts()).items[0];
    assert.ok(mine);
    assert.equal((await t.other.client.errorReporting.listAttempts()).total_items, 0);
    for (const call of [() => t.other.client.errorReporting.getAttempt(mine.id), () => t.other.client.errorReporting.resend(mine.id)]) {
      await assert.rejects(call(), (e: unknown) => e instanceof PlaylineApiError && e.status === 404);
    }
    await assert.rejects(t.client.errorReporting.getAttempt('att_unknown'), (e: unknown) => e instanceof PlaylineApiError && e.code === 'not_found');
  });

  test('without a callback, resend and resume are 422 callback_not_configured', opts, async () => {
    const mine = (await t.client.errorReporting.listAttempts()).items[0];
    assert.ok(mine);
    await t.client.errorReporting.deleteSettings();
    await assert.rejects(t.client.errorReporting.resend(mine.id), (e: unknown) => e instanceof PlaylineApiError && e.status === 422 && e.code === 'callback_not_configured');
    await assert.rejects(t.client.errorReporting.resume(), (e: unknown) => e instanceof PlaylineApiError && e.code === 'callback_not_configured');
  });
});
