import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { Webhook } from 'standardwebhooks';
import type { OperationalEventType } from '../../platform/operational-events.js';
import { operationalEventBody } from './webhooks.schema.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { FakeClock } from '../../platform/clock.js';
import { startLocalReceiver, type LocalReceiver } from '../../platform/outbound/testing/local-receiver.js';

const opts = { timeout: 30_000 };

/** Publishing's status changes reach a subscribed endpoint (the simulated publisher of the test app). */
describe('publishing schedules emit publishing.active and publishing.error', () => {
  let t: TestApp;
  let receiver: LocalReceiver;
  before(async () => {
    t = await createTestApp({ clock: new FakeClock(Date.now() - 60_000), env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' } });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  test('start, then a push that breaks, then a stop: active and error delivered, nothing for the stop', opts, async () => {
    const sub = await t.client.webhooks.createSubscription({ url: receiver.url, event_types: ['publishing.active', 'publishing.error'] });
    const target = await t.client.syndication.createTarget({ platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_secret_key', description: 'twitch' });
    const schedule = await t.client.syndication.createSchedule({ syndication_target_id: target.id, content_id: 'event-1', content_type: 'e', region: 'us-west-2' });
    await t.client.syndication.scheduleAction(schedule.id, 'start');
    await receiver.waitFor(1);
    await t.runtime.syndication.schedules.applyPushReport(t.workspace.id, schedule.id, { state: 'error', reason: 'the target refused the stream' });
    await receiver.waitFor(2);
    // Repeating the error changes no status: no event.
    await t.runtime.syndication.schedules.applyPushReport(t.workspace.id, schedule.id, { state: 'error', reason: 'the target refused the stream' });
    await t.client.syndication.scheduleAction(schedule.id, 'stop');
    await t.runtime.webhooks.events.settled();
    await t.runtime.webhooks.deliverer.claimNow();
    assert.equal(receiver.count(), 2);

    const events = receiver.received.map((got) => {
      const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
      return new Webhook(sub.signing_secret).verify(got.body, headers) as { type: string; data: Record<string, unknown> };
    });
    assert.deepEqual(events.map((e) => [e.type, e.data.status, e.data.error]), [
      ['publishing.active', 'active', null],
      ['publishing.error', 'error', 'the target refused the stream'],
    ]);
    assert.deepEqual(events[0]?.data, { owner: t.workspace.id, schedule_id: schedule.id, target_id: target.id, content_id: 'event-1', content_type: 'e', status: 'active', error: null });
    // As the OpenAPI document describes them.
    for (const event of events) assert.ok(Value.Check(operationalEventBody(event.type as OperationalEventType), event), JSON.stringify(event));
    // The stream key never travels in an event.
    assert.ok(receiver.received.every((got) => !got.body.includes('live_secret_key')));
  });
});
