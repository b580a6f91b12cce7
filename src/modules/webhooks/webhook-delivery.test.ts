import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { eventually } from '../../../test/helpers/eventually.js';
import { FakeClock } from '../../platform/clock.js';
import { startLocalReceiver, type LocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import { RETRY_SCHEDULE_MS } from './webhook-deliverer.js';

const opts = { timeout: 30_000 };

/**
 * The fake clock starts 150 s behind the real one: the standardwebhooks verifier compares the
 * signed timestamp with the real clock (±5 min), and the retries below move the fake one 305 s on.
 */
const fakeClock = () => new FakeClock(Date.now() - 150_000);

const headersOf = (got: LocalReceiver['received'][number]): Record<string, string> =>
  Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));

describe('operational events delivered to subscribed endpoints', () => {
  let t: TestApp;
  let receiver: LocalReceiver;
  before(async () => {
    t = await createTestApp({ clock: fakeClock(), env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_WEBHOOK_MAX_PENDING: '2' } });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const attempts = async (subscriptionId: string) => (await t.client.webhooks.listAttempts({ subscription_id: subscriptionId, limit: 100 })).items;
  const attemptsReach = (subscriptionId: string, n: number) =>
    eventually(async () => (await attempts(subscriptionId)).length >= n, `${n} attempts logged`);

  test('an event reaches the endpoint signed, and the standardwebhooks library verifies it; other types, workspaces and disabled subscriptions get nothing', opts, async () => {
    receiver.setBehaviour({ kind: 'status', status: 200 });
    const start = receiver.count();
    const sub = await t.client.webhooks.createSubscription({ url: receiver.url, event_types: ['live.started', 'live.ended'] });
    const disabled = await t.client.webhooks.createSubscription({ url: `${receiver.url}?disabled`, event_types: ['live.started'], enabled: false });
    const theirs = await t.other.client.webhooks.createSubscription({ url: `${receiver.url}?theirs`, event_types: ['live.started'] });

    assert.equal(await t.runtime.webhooks.events.publish(t.workspace.id, 'asset.ready', { asset_id: 'a1' }), 0);
    assert.equal(await t.runtime.webhooks.events.publish(t.workspace.id, 'live.started', { slicer_id: 's1', state: 'live' }), 1);
    await receiver.waitFor(start + 1);
    await attemptsReach(sub.id, 1);
    // Nothing else arrives: the one stored delivery is done.
    await t.runtime.webhooks.deliverer.claimNow();
    assert.equal(receiver.count(), start + 1);

    const got = receiver.received.at(-1);
    assert.ok(got);
    assert.equal(got.path, '/hook');
    const verified = new Webhook(sub.signing_secret).verify(got.body, headersOf(got)) as { type: string; timestamp: string; data: Record<string, unknown> };
    assert.deepEqual(verified, { type: 'live.started', timestamp: verified.timestamp, data: { owner: t.workspace.id, slicer_id: 's1', state: 'live' } });
    assert.match(verified.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.match(String(got.headers['webhook-id']), /^msg_[0-9a-f]{32}$/);
    assert.equal(got.headers['content-type'], 'application/json');
    // Another secret does not verify it.
    assert.throws(() => new Webhook(theirs.signing_secret).verify(got.body, headersOf(got)));

    const [logged] = await attempts(sub.id);
    assert.equal(logged?.outcome, 'delivered');
    assert.equal(logged?.status, 200);
    assert.equal(logged?.webhook_id, got.headers['webhook-id']);
    const detail = await t.client.webhooks.getAttempt(logged?.id ?? '');
    assert.equal(detail.request.body, got.body);
    assert.equal(detail.request.headers['webhook-signature'], got.headers['webhook-signature']);
    assert.equal(detail.event.type, 'live.started');
    assert.equal((await t.client.webhooks.getSubscription(sub.id)).pending_deliveries, 0);
    // Not in the Error Reports' view of the shared log, and not in the other workspace's.
    assert.equal((await t.client.errorReporting.listAttempts()).items.some((a) => a.id === logged?.id), false);
    assert.equal((await t.other.client.webhooks.listAttempts()).total_items, 0);
    assert.equal((await refusedStatus(t.other.client.webhooks.getAttempt(logged?.id ?? ''))), 404);
    assert.equal((await refusedStatus(t.client.errorReporting.getAttempt(logged?.id ?? ''))), 404);

    for (const id of [sub.id, disabled.id]) await t.client.webhooks.deleteSubscription(id);
    await t.other.client.webhooks.deleteSubscription(theirs.id);
  });

  test('a receiver that fails twice then answers 200 gets the event on the third attempt, on the retry schedule (fake clock)', opts, async () => {
    receiver.setBehaviour({ kind: 'status', status: 500 });
    const start = receiver.count();
    const sub = await t.client.webhooks.createSubscription({ url: receiver.url, event_types: ['publishing.error'] });
    await t.runtime.webhooks.events.publish(t.workspace.id, 'publishing.error', { schedule_id: 'sch1', status: 'error', error: 'refused by the target' });
    await attemptsReach(sub.id, 1);
    assert.equal(receiver.count(), start + 1);

    // Not before its time: 5 s after the first attempt.
    (t.clock as FakeClock).advance(RETRY_SCHEDULE_MS[1] as number - 1);
    await t.runtime.webhooks.deliverer.claimNow();
    assert.equal(receiver.count(), start + 1);
    (t.clock as FakeClock).advance(1);
    await attemptsReach(sub.id, 2);
    assert.equal(receiver.count(), start + 2);

    receiver.setBehaviour({ kind: 'status', status: 200 });
    (t.clock as FakeClock).advance(RETRY_SCHEDULE_MS[2] as number - 1);
    await t.runtime.webhooks.deliverer.claimNow();
    assert.equal(receiver.count(), start + 2);
    (t.clock as FakeClock).advance(1);
    await attemptsReach(sub.id, 3);

    const three = receiver.received.slice(-3);
    assert.equal(new Set(three.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id for every attempt of the event');
    const verified = new Webhook(sub.signing_secret).verify(three[2]?.body ?? '', headersOf(three[2] as LocalReceiver['received'][number])) as { type: string };
    assert.equal(verified.type, 'publishing.error');
    const log = (await attempts(sub.id)).reverse();
    assert.deepEqual(log.map((a) => [a.outcome, a.status]), [['non_200', 500], ['non_200', 500], ['delivered', 200]]);
    assert.match(log[0]?.detail ?? '', /^attempt 1 of 7: HTTP 500; next attempt at /);
    assert.equal((await t.client.webhooks.getSubscription(sub.id)).pending_deliveries, 0);

    // Resend from the log: one more attempt now, same webhook-id, signed anew.
    const resent = await t.client.webhooks.resend(log[0]?.id ?? '');
    assert.equal(resent.outcome, 'delivered');
    assert.equal(resent.resend_of, log[0]?.id);
    assert.equal(resent.webhook_id, log[0]?.webhook_id);
    const last = receiver.received.at(-1) as LocalReceiver['received'][number];
    assert.equal(last.headers['webhook-id'], log[0]?.webhook_id);
    assert.doesNotThrow(() => new Webhook(sub.signing_secret).verify(last.body, headersOf(last)));
    await t.client.webhooks.deleteSubscription(sub.id);
  });

  test('seven failed attempts give the delivery up; more than PLAYLINE_WEBHOOK_MAX_PENDING pending drops the oldest, logged as dropped', opts, async () => {
    receiver.setBehaviour({ kind: 'status', status: 503 });
    const clock = t.clock as FakeClock;
    const sub = await t.client.webhooks.createSubscription({ url: receiver.url, event_types: ['asset.failed'] });
    await t.runtime.webhooks.events.publish(t.workspace.id, 'asset.failed', { asset_id: 'first', reason: 'not media' });
    await attemptsReach(sub.id, 1);
    await t.runtime.webhooks.events.publish(t.workspace.id, 'asset.failed', { asset_id: 'second', reason: 'not media' });
    await attemptsReach(sub.id, 2);
    // A third pending one: the cap is 2, the oldest (first) is dropped.
    await t.runtime.webhooks.events.publish(t.workspace.id, 'asset.failed', { asset_id: 'third', reason: 'not media' });
    await attemptsReach(sub.id, 4);
    const dropped = (await t.client.webhooks.listAttempts({ subscription_id: sub.id, outcome: 'dropped' })).items;
    assert.equal(dropped.length, 1);
    assert.equal(dropped[0]?.detail, 'overflow');
    assert.equal((await t.client.webhooks.getAttempt(dropped[0]?.id ?? '')).event.data.asset_id, 'first');
    assert.equal((await t.client.webhooks.getSubscription(sub.id)).pending_deliveries, 2);

    // Through the whole schedule: every delivery ends after its seventh attempt.
    for (const delay of RETRY_SCHEDULE_MS.slice(1)) {
      const before = (await attempts(sub.id)).length;
      clock.advance(delay);
      await attemptsReach(sub.id, before + 2);
    }
    await t.runtime.webhooks.deliverer.claimNow();
    assert.equal((await t.client.webhooks.getSubscription(sub.id)).pending_deliveries, 0);
    const log = await attempts(sub.id);
    // The first event's one attempt before it was dropped, then seven for each of the other two.
    const sent = log.filter((a) => a.outcome === 'non_200');
    assert.equal(sent.length, 1 + 7 + 7);
    assert.ok(log.some((a) => a.detail?.endsWith('no attempt left: given up')));
    // Paged newest first: the pages together are the whole log, each attempt once.
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await t.client.webhooks.listAttempts({ subscription_id: sub.id, limit: 7, ...(cursor ? { cursor } : {}) });
      assert.equal(page.total_items, log.length);
      paged.push(...page.items.map((a) => a.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    assert.deepEqual(paged, log.map((a) => a.id));
    const bad = await t.client.core.send('GET', '/api/v4/webhooks/attempts', { query: { cursor: 'not-a-cursor' } });
    assert.equal(bad.status, 400);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /playline_webhook_failed_total\{reason="exhausted"\} 2/);
    assert.match(metrics.body, /playline_webhook_failed_total\{reason="overflow"\} 1/);
    assert.doesNotMatch(metrics.body, /playline_webhook[^\n]*workspace/);
    await t.client.webhooks.deleteSubscription(sub.id);
  });
});

const refusedStatus = async (call: Promise<unknown>): Promise<number> => {
  try {
    await call;
    return 200;
  } catch (err) {
    return (err as { status: number }).status;
  }
};
