import { after, before, describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../../../test/helpers/test-app.js';
import type { TestApp } from '../../../test/helpers/test-app.js';
import { eventually } from '../../../test/helpers/eventually.js';
import type { FakeClock } from '../../platform/clock.js';
import { playbackError, verifies } from './testing/logged-attempts.js';
import { startLocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import type { LocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import { WebhookSigner } from '../../platform/outbound/webhook-signature.js';

const opts = { timeout: 60_000 };

/** Saves a callback at `receiver`, then makes it answer 500 once so the endpoint pauses. */
const pauseEndpoint = async (t: TestApp, receiver: LocalReceiver): Promise<string> => {
  const secret = (await t.client.errorReporting.putSettings({ callback_url: receiver.url })).signing_secret;
  receiver.setBehaviour({ kind: 'status', status: 500 });
  const n = receiver.count();
  assert.equal(t.runtime.errorReports.submit(playbackError(t.workspace.id, 500)), 'queued');
  await receiver.waitFor(n + 1);
  await eventually(async () => ((await t.client.errorReporting.deliveries()).endpoint?.paused_until ?? 0) > t.clock.now(), 'paused after the 500');
  return secret;
};

describe('reports dropped while the endpoint is paused are in the delivery log', () => {
  let t: TestApp;
  let receiver: LocalReceiver;
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' } });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  test('each is logged as dropped (reason paused) with the body and signature it would have been sent with, and resend delivers it once the endpoint answers', opts, async () => {
    const secret = await pauseEndpoint(t, receiver);
    const sentBefore = receiver.count();
    const codes = [401, 403, 404, 410, 429, 451, 502];
    for (const code of codes) assert.equal(t.runtime.errorReports.submit(playbackError(t.workspace.id, code)), 'paused');
    assert.equal(receiver.count(), sentBefore, 'nothing was sent while paused');

    const all = await t.client.errorReporting.listAttempts();
    assert.equal(all.total_items, 1 + codes.length, 'the failed attempt and every dropped report');
    const dropped = await t.client.errorReporting.listAttempts({ outcome: 'dropped' });
    assert.equal(dropped.total_items, codes.length);
    for (const a of dropped.items) {
      assert.equal(a.outcome, 'dropped');
      assert.equal(a.drop_reason, 'paused');
      assert.equal(a.detail, 'paused');
      assert.equal(a.status, null);
      assert.equal(a.url, receiver.url);
    }
    assert.equal(new Set(dropped.items.map((a) => a.webhook_id)).size, codes.length, 'a webhook-id each');
    const details = await Promise.all(dropped.items.map((a) => t.client.errorReporting.getAttempt(a.id)));
    assert.deepEqual(details.map((d) => d.payload.code).sort(), [...codes].sort());
    for (const d of details) {
      assert.equal(d.payload.owner, t.workspace.id);
      assert.ok(verifies(secret, d), 'the logged headers sign the logged body with the signing secret');
    }
    const counters = (await t.client.errorReporting.deliveries()).counters;
    assert.equal(counters.dropped.paused, codes.length);

    receiver.setBehaviour({ kind: 'status', status: 200 });
    for (const d of details) {
      const resent = await t.client.errorReporting.resend(d.id);
      assert.equal(resent.outcome, 'delivered');
      assert.equal(resent.resend_of, d.id);
      assert.equal(resent.webhook_id, d.webhook_id, 'a resend keeps the webhook-id');
      const got = receiver.received.at(-1);
      assert.equal(got?.body, d.request.body, 'the receiver got the dropped report');
      assert.equal(got?.headers['webhook-id'], d.webhook_id);
    }
    assert.equal(receiver.count(), sentBefore + codes.length);
    assert.equal((await t.client.errorReporting.listAttempts({ outcome: 'delivered' })).total_items, codes.length);
  });
});

describe('a flood of dropped reports stays within the delivery log bounds', () => {
  let t: TestApp;
  let receiver: LocalReceiver;
  before(async () => {
    t = await createTestApp({
      env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_DELIVERY_LOG_QUEUE: '50', PLAYLINE_DELIVERY_LOG_WRITE_RATE: '100' },
    });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
  });
  after(async () => {
    mock.restoreAll();
    await t.close();
    await receiver.close();
  });

  test('beyond the log queue drops are counted and left out, not built or signed; the write rate applies', opts, async () => {
    await pauseEndpoint(t, receiver);
    await t.client.errorReporting.listAttempts(); // the failed attempt is written: the log queue is empty
    const log = t.runtime.errorReporting.deliveryLog;
    const before = log.stats();
    assert.equal(before.queued, 0);
    const signing = mock.method(WebhookSigner.prototype, 'sign');
    const flood = 20_000;
    for (let i = 0; i < flood; i++) t.runtime.errorReports.submit(playbackError(t.workspace.id, 400 + (i % 100)));
    const stats = log.stats();
    assert.equal(stats.queued, 50, 'the log queue is full, no fuller');
    assert.equal(stats.droppedFull - before.droppedFull, flood - 50, 'the rest counted as left out of the log');
    assert.equal(signing.mock.callCount(), 50, 'only the drops that enter the log are signed');
    signing.mock.restore();
    assert.equal((await t.client.errorReporting.deliveries()).counters.dropped.paused, flood, 'every drop counted');

    // The background writer: 100 a second, a write every 100 ms -> 10 rows a tick.
    (t.clock as FakeClock).advance(100);
    await eventually(() => log.stats().written - before.written === 10, 'one tick wrote 10');
    assert.equal(log.stats().queued, 40);
    const listed = await t.client.errorReporting.listAttempts({ outcome: 'dropped' });
    assert.equal(listed.total_items, 50, 'what entered the log is listed');
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, new RegExp(`playline_error_reporting_log_dropped_total\\{reason="queue_full"\\} ${flood - 50}\\b`));
  });
});
