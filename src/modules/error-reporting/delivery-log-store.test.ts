import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import { eventually } from '../../../test/helpers/eventually.js';
import { FakeClock } from '../../platform/clock.js';
import { randomIds, sequentialIds } from '../../platform/ids.js';
import type { CallbackRequest } from '../../platform/outbound/delivery-client.js';
import type { DeliveryAttempt } from './delivery-log.js';
import { DeliveryLogStore, type DeliveryLogStoreOptions } from './delivery-log-store.js';
import { listDeliveries } from '../../platform/outbound/attempt-log.repository.js';
import { deleteWorkspaceRows } from './error-reporting.repository.js';

const hour = 3_600_000;
const request: CallbackRequest = {
  body: '{"owner":"ws","subtype":"web"}',
  headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,abc', 'x-other': 'not logged' },
};
const attemptAt = (at: number, outcome: DeliveryAttempt['outcome'] = 'delivered'): DeliveryAttempt => ({
  at,
  webhookId: `msg_${at}`,
  url: 'https://hooks.example.com/x',
  outcome,
  status: outcome === 'delivered' ? 200 : 500,
  latencyMs: 12.4,
});

for (const engine of await testEngines()) {
  describe(`the persistent delivery log on ${engine.engine}`, { skip: engine.skip }, () => {
    let s: TestStorage;
    const errors: string[] = [];
    // One id sequence for every store of the suite: the ids are the table's primary key.
    const ids = sequentialIds();
    const storeOf = (clock: FakeClock, o: Partial<DeliveryLogStoreOptions> = {}) =>
      new DeliveryLogStore({
        db: s.storage.db,
        clock,
        ids,
        queueCapacity: 1000,
        retentionMs: 24 * hour,
        maxPerWorkspace: 1000,
        writeRatePerS: 1000,
        onError: (message) => errors.push(message),
        ...o,
      });
    const count = async (owner: string) => (await listDeliveries(s.storage.db, owner, {}, 10_000)).total;

    before(async () => {
      s = await engine.open();
    });
    after(() => s.cleanup());

    test('attempts are queued without waiting and written by the timer at the write rate; only the signature headers are kept', async () => {
      const clock = new FakeClock();
      // 20 a second, a write every 100 ms: 2 rows per write.
      const log = storeOf(clock, { writeRatePerS: 20, flushMs: 100 });
      for (let i = 0; i < 5; i++) assert.equal(log.record('ws-batch', attemptAt(clock.now() + i), request), true);
      assert.equal(log.stats().queued, 5, 'nothing written before the timer');
      assert.equal(await count('ws-batch'), 0);
      clock.advance(100);
      await eventually(async () => (await count('ws-batch')) === 2, 'two written by the first tick');
      assert.equal(log.stats().queued, 3, 'the rest waits for the next ticks');
      await eventually(() => clock.pendingTimers() === 1, 'the next tick scheduled');
      clock.advance(100);
      await eventually(async () => (await count('ws-batch')) === 4, 'two more');
      await eventually(() => clock.pendingTimers() === 1, 'the next tick scheduled');
      clock.advance(100);
      await eventually(async () => (await count('ws-batch')) === 5, 'the last one');
      await eventually(() => log.stats().queued === 0 && clock.pendingTimers() === 0, 'no tick while nothing waits');
      // A read writes what waits, up to one second's worth (20 here).
      for (let i = 0; i < 25; i++) log.record('ws-batch', attemptAt(clock.now() + 10 + i), request);
      await log.flushForRead();
      assert.equal(await count('ws-batch'), 25);
      assert.equal(log.stats().queued, 5);
      const { rows } = await listDeliveries(s.storage.db, 'ws-batch', {}, 1);
      assert.equal(rows[0]?.latency_ms, 12);
      const stored = await s.storage.db.selectFrom('error_report_deliveries').select('headers').where('workspace_id', '=', 'ws-batch').executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(stored.headers), { 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,abc' });
      await log.stop();
      assert.equal(await count('ws-batch'), 30, 'stop writes everything queued');
      assert.equal(log.stats().written, 30);
    });

    test('a full queue leaves attempts out of the log and counts them; record never waits', async () => {
      const clock = new FakeClock();
      const log = storeOf(clock, { queueCapacity: 4 });
      const results = Array.from({ length: 10 }, (_, i) => log.record('ws-full', attemptAt(clock.now() + i), request));
      assert.deepEqual(results, [true, true, true, true, false, false, false, false, false, false]);
      assert.equal(log.stats().droppedFull, 6);
      await log.flush();
      assert.equal(await count('ws-full'), 4);
      // Room again once written.
      assert.equal(log.record('ws-full', attemptAt(clock.now() + 20), request), true);
      await log.stop();
      assert.equal(await count('ws-full'), 5, 'stop writes what is queued');
    });

    test('the background sweep deletes attempts older than the retention, then the oldest beyond the count per workspace', async () => {
      const clock = new FakeClock();
      const log = storeOf(clock, { retentionMs: 24 * hour, maxPerWorkspace: 3, sweepMs: 60_000 });
      const start = clock.now();
      // ws-old: two attempts now; ws-many: five attempts an hour apart.
      log.record('ws-old', attemptAt(start), request);
      log.record('ws-old', attemptAt(start + 1), request);
      for (let i = 0; i < 5; i++) log.record('ws-many', attemptAt(start + i * hour), request);
      await log.flush();
      // One sweep on the fake clock: the next is scheduled once the previous ended.
      const sweepOnce = async () => {
        await eventually(() => clock.pendingTimers() === 1, 'a sweep scheduled');
        clock.advance(60_000);
        await eventually(() => clock.pendingTimers() === 1, 'the sweep ended');
      };
      log.start();
      await sweepOnce();
      const kept = (await listDeliveries(s.storage.db, 'ws-many', {}, 10)).rows.map((r) => r.at);
      assert.deepEqual(kept, [start + 4 * hour, start + 3 * hour, start + 2 * hour], 'trimmed to the newest three');
      assert.equal(await count('ws-old'), 2, 'within both limits');
      // A day later the sweep (still running every minute) deletes what is past the retention.
      clock.advance(24 * hour);
      await sweepOnce();
      assert.equal(await count('ws-old'), 0, 'past the retention');
      assert.equal(await count('ws-many'), 3, 'the newest of ws-many are younger than 24 h');
      clock.advance(4 * hour);
      await sweepOnce();
      assert.equal(await count('ws-many'), 0, 'all past the retention');
      assert.ok(log.stats().swept >= 7);
      await log.stop();
      assert.deepEqual(errors, []);
    });

    test('a deleted workspace: its queued attempts are not written and its rows go', async () => {
      const clock = new FakeClock();
      const log = storeOf(clock);
      log.record('ws-gone', attemptAt(clock.now()), request);
      await log.flush();
      log.record('ws-gone', attemptAt(clock.now() + 1), request);
      log.record('ws-kept', attemptAt(clock.now() + 1), request);
      log.forgetWorkspace('ws-gone');
      await deleteWorkspaceRows(s.storage.db, 'ws-gone');
      await log.stop();
      assert.equal(await count('ws-gone'), 0);
      assert.equal(await count('ws-kept'), 1);
    });
  });
}

test('attempt ids are in time order (each insert lands at the end of the primary-key index) and unique within a millisecond', () => {
  const clock = new FakeClock(1_763_719_200_000);
  const log = new DeliveryLogStore({ db: undefined as never, clock, ids: randomIds, queueCapacity: 1, retentionMs: 1, maxPerWorkspace: 1, writeRatePerS: 1, onError: () => undefined });
  const made: string[] = [];
  for (const step of [0, 1, 999, 3_600_000, 86_400_000 * 400]) {
    clock.advance(step);
    made.push(log.newId());
  }
  for (const id of made) assert.match(id, /^att_[0-9a-f]{32}$/);
  assert.deepEqual([...made].sort(), made, 'a later id sorts after an earlier one');
  const sameMs = new Set(Array.from({ length: 10_000 }, () => log.newId()));
  assert.equal(sameMs.size, 10_000);
});
