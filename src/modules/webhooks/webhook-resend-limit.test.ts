import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { eventually } from '../../../test/helpers/eventually.js';
import { FakeClock } from '../../platform/clock.js';
import { startLocalReceiver, type LocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import { ResendLimit } from './resend-limit.js';

/**
 * Issue 35 (low): webhook resend had no rate limit: each call is an outbound request to the
 * subscription's endpoint, so one key could make the server send as fast as it could call.
 */
describe('webhook resend is rate limited per workspace', () => {
  let t: TestApp;
  let receiver: LocalReceiver;
  before(async () => {
    // Behind the real clock, as the signature check of the receiver library wants a recent timestamp.
    t = await createTestApp({ clock: new FakeClock(Date.now() - 60_000), env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_WEBHOOK_RESEND_LIMIT: '3' } });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  test('beyond PLAYLINE_WEBHOOK_RESEND_LIMIT a minute: 429 throttled with Retry-After, nothing sent; the next window sends again', { timeout: 60_000 }, async () => {
    const sub = await t.client.webhooks.createSubscription({ url: receiver.url, event_types: ['live.started'] });
    await t.runtime.webhooks.events.publish(t.workspace.id, 'live.started', { slicer_id: 's1', state: 'live' });
    await eventually(async () => (await t.client.webhooks.listAttempts({ subscription_id: sub.id })).items.length >= 1, 'the event delivered');
    const [attempt] = (await t.client.webhooks.listAttempts({ subscription_id: sub.id })).items;
    assert.ok(attempt);
    const resend = () => t.client.core.send('POST', `/api/v4/webhooks/attempts/${attempt.id}/resend`);
    for (let i = 0; i < 3; i++) assert.equal((await resend()).status, 200);
    const sent = receiver.count();
    for (let i = 0; i < 5; i++) {
      const refused = await resend();
      assert.equal(refused.status, 429, refused.body);
      assert.equal((JSON.parse(refused.body) as { code: string }).code, 'throttled');
      assert.ok(Number(refused.headers['retry-after']) >= 1, String(refused.headers['retry-after']));
    }
    assert.equal(receiver.count(), sent, 'a refused resend sends nothing');
    (t.clock as FakeClock).advance(60_000);
    assert.equal((await resend()).status, 200, 'a new window');
  });
});

test('the limit counts per workspace, and caps the resends in flight at once', () => {
  const clock = new FakeClock(0);
  const limit = new ResendLimit(clock, { perWindow: 5, windowMs: 60_000, inFlight: 2 });
  const a1 = limit.take('a');
  const a2 = limit.take('a');
  assert.ok('release' in a1 && 'release' in a2);
  assert.deepEqual(limit.take('a'), { retryAfterS: 1 }, 'two in flight already');
  assert.ok('release' in limit.take('b'), 'another workspace is not held back');
  a1.release();
  a1.release(); // once only
  const a3 = limit.take('a');
  assert.ok('release' in a3);
  assert.deepEqual(limit.take('a'), { retryAfterS: 1 });
  a2.release();
  a3.release();
  assert.ok('release' in limit.take('a'));
  const fifth = limit.take('a');
  assert.ok('release' in fifth);
  fifth.release();
  clock.advance(20_000);
  assert.deepEqual(limit.take('a'), { retryAfterS: 40 }, 'five in this window');
  clock.advance(40_000);
  assert.ok('release' in limit.take('a'));
});
