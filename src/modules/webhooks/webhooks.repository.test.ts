import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import { insertDeliveries } from '../../platform/outbound/attempt-log.repository.js';
import { listDeliveries } from '../../platform/outbound/attempt-log.repository.js';
import * as repo from './webhooks.repository.js';

const t0 = Date.UTC(2026, 10, 21, 10, 0, 0);

const subscription = (id: string, owner: string): repo.SubscriptionRow => ({
  id, workspace_id: owner, url: 'https://hooks.example.com/x', event_types: '["asset.ready"]', description: '', enabled: 1,
  secret_sealed: 'sealed', previous_secret_sealed: null, previous_secret_expires_at: null, created_at: t0, updated_at: t0,
});

const pending = (id: string, subscriptionId: string, owner: string, dueAt: number, createdAt = t0): repo.PendingDeliveryRow => ({
  id, workspace_id: owner, subscription_id: subscriptionId, event_id: `msg_${id}`, event_type: 'asset.ready', body: '{}',
  attempts: 0, next_attempt_at: dueAt, lease_owner: null, lease_expires_at: null, created_at: createdAt,
});

const logged = (id: string, owner: string, subscriptionId: string | null): repo.AttemptRow => ({
  id, workspace_id: owner, webhook_id: `msg_${id}`, url: 'https://hooks.example.com/x', at: t0, outcome: 'non_200', status: 500, latency_ms: 3,
  detail: null, body: '{}', headers: '{}', resend_of: null, subscription_id: subscriptionId,
});

for (const engine of await testEngines()) {
  describe(`webhook storage on ${engine.engine}`, { skip: engine.skip }, () => {
    let s: TestStorage;
    before(async () => {
      s = await engine.open();
      for (const id of ['ws_a', 'ws_b']) await s.storage.db.insertInto('workspaces').values({ id, name: id, created_at: t0 }).execute();
      await repo.insertSubscription(s.storage.db, subscription('whs_a', 'ws_a'));
      await repo.insertSubscription(s.storage.db, subscription('whs_b', 'ws_b'));
    });
    after(() => s.cleanup());

    test('subscriptions are found only in their workspace', async () => {
      const db = s.storage.db;
      assert.equal((await repo.findSubscription(db, 'ws_a', 'whs_a'))?.id, 'whs_a');
      assert.equal(await repo.findSubscription(db, 'ws_a', 'whs_b'), undefined);
      assert.equal(await repo.updateSubscription(db, 'ws_a', 'whs_b', { description: 'taken' }), false);
      assert.equal(await repo.deleteSubscription(db, 'ws_a', 'whs_b'), false);
      assert.deepEqual((await repo.listSubscriptions(db, 'ws_a')).map((r) => r.id), ['whs_a']);
      assert.equal(await repo.countSubscriptions(db, 'ws_b'), 1);
    });

    test('one of two racing instances claims a due attempt; a live lease is left alone, an expired one is taken', async () => {
      const db = s.storage.db;
      await repo.insertPendingDelivery(db, pending('whd_1', 'whs_a', 'ws_a', t0));
      await repo.insertPendingDelivery(db, pending('whd_later', 'whs_a', 'ws_a', t0 + 5_000));
      assert.deepEqual(await repo.dueDeliveryIds(db, t0, 10), ['whd_1']);
      const [one, two] = await Promise.all([repo.claimDelivery(db, 'whd_1', 'i1', t0, 60_000), repo.claimDelivery(db, 'whd_1', 'i2', t0, 60_000)]);
      assert.equal([one, two].filter((c) => c !== undefined).length, 1);
      const holder = (one ?? two)?.lease_owner as string;
      assert.deepEqual(await repo.dueDeliveryIds(db, t0 + 1_000, 10), []);
      assert.equal(await repo.claimDelivery(db, 'whd_later', 'i1', t0, 60_000), undefined, 'not due yet');
      assert.equal(await repo.nextDueAt(db), t0 + 5_000);

      // Fenced: another instance cannot end the attempt.
      const other = holder === 'i1' ? 'i2' : 'i1';
      assert.equal(await repo.finishAttempt(db, { id: 'whd_1', leaseOwner: other, attempts: 0 }, logged('att_x', 'ws_a', 'whs_a'), { at: t0 + 5_000 }), false);
      assert.equal((await listDeliveries(db, 'ws_a', {}, 10)).total, 0);
      // The holder schedules the next attempt; the log row is written with it.
      assert.equal(await repo.finishAttempt(db, { id: 'whd_1', leaseOwner: holder, attempts: 0 }, logged('att_1', 'ws_a', 'whs_a'), { at: t0 + 5_000 }), true);
      const page = await repo.listAttempts(db, 'ws_a', {}, 10);
      assert.deepEqual(page.rows.map((r) => r.id), ['att_1']);
      assert.deepEqual(await repo.dueDeliveryIds(db, t0 + 5_000, 10), ['whd_1', 'whd_later']);

      // Expired lease: taken over; releaseAllLeases (embedded start) frees every lease.
      const taken = await repo.claimDelivery(db, 'whd_later', 'i1', t0 + 5_000, 1_000);
      assert.equal(taken?.lease_owner, 'i1');
      assert.equal((await repo.claimDelivery(db, 'whd_later', 'i2', t0 + 6_000, 1_000))?.lease_owner, 'i2');
      assert.equal(await repo.releaseAllLeases(db), 1);
      // Delivered: the delivery goes.
      const again = await repo.claimDelivery(db, 'whd_1', 'i3', t0 + 7_000, 60_000);
      assert.ok(again);
      assert.equal(Number(again.attempts), 1);
      assert.equal(await repo.finishAttempt(db, { id: 'whd_1', leaseOwner: 'i3', attempts: 0 }, { ...logged('att_2', 'ws_a', 'whs_a'), outcome: 'delivered' }, undefined), false, 'fenced by the attempt count');
      assert.equal(await repo.finishAttempt(db, { id: 'whd_1', leaseOwner: 'i3', attempts: Number(again.attempts) }, { ...logged('att_2', 'ws_a', 'whs_a'), outcome: 'delivered' }, undefined), true);
      assert.equal(await repo.countPending(db, 'whs_a'), 1);
    });

    test('the shared delivery log: event attempts and Error Reports are listed apart; deleting a subscription removes its pending deliveries', async () => {
      const db = s.storage.db;
      await insertDeliveries(db, [logged('att_report', 'ws_a', null)]);
      assert.deepEqual((await listDeliveries(db, 'ws_a', {}, 10)).rows.map((r) => r.id), ['att_report']);
      assert.ok(!(await repo.listAttempts(db, 'ws_a', {}, 10)).rows.some((r) => r.id === 'att_report'));
      assert.equal(await repo.findAttempt(db, 'ws_a', 'att_report'), undefined);
      assert.equal((await repo.findAttempt(db, 'ws_a', 'att_1'))?.subscription_id, 'whs_a');
      assert.equal(await repo.findAttempt(db, 'ws_b', 'att_1'), undefined);
      assert.equal((await repo.listAttempts(db, 'ws_a', { subscriptionId: 'whs_a', outcome: 'delivered' }, 10)).total, 1);

      await repo.insertPendingDelivery(db, pending('whd_b', 'whs_b', 'ws_b', t0));
      assert.deepEqual([...(await repo.pendingBySubscription(db, 'ws_b'))], [['whs_b', 1]]);
      assert.equal(await repo.deleteSubscription(db, 'ws_b', 'whs_b'), true);
      assert.equal(await repo.countPending(db, 'whs_b'), 0);
      assert.equal(await repo.deleteWorkspaceRows(db, 'ws_a'), 2);
    });
  });
}
