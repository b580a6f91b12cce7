import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterPair, clusterPairProblem, type ClusterPair } from '../../../test/helpers/cluster-pair.js';
import { eventually } from '../../../test/helpers/eventually.js';
import type { FakeClock } from '../../platform/clock.js';
import { startLocalReceiver, type LocalReceiver } from '../../platform/outbound/testing/local-receiver.js';

const skip = await clusterPairProblem();

// Cluster mode: every instance writes its attempts to the shared PostgreSQL log, so any instance
// lists all of them; resuming on one instance resumes the endpoint on the others.
describe('the delivery log in cluster mode', { skip }, () => {
  let pair: ClusterPair;
  let receiver: LocalReceiver;
  before(async () => {
    pair = await clusterPair({ env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' } });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
  });
  after(async () => {
    await pair?.close();
    await receiver?.close();
  });

  test('attempts made by each instance are listed by both; a resume on one reaches the other', { timeout: 60_000 }, async () => {
    const { a, b } = pair;
    const owner = a.workspace.id;
    const onB = b.clientFor(owner, a.key.secret);
    await a.client.errorReporting.putSettings({ callback_url: receiver.url });
    await eventually(() => b.runtime.errorReporting.dispatcher.routeFor(owner) !== undefined, 'B follows the saved callback');
    const report = (code: number) => ({ owner, url: 'https://edge.example.com/a.m3u8', ip: '203.0.113.3', code, ua: 'P/1', msg: `from ${code}`, timestamp: 1_763_719_200, errorCode: 104 });
    a.runtime.errorReports.submit(report(401));
    b.runtime.errorReports.submit(report(402));
    await receiver.waitFor(3);
    await eventually(() => b.runtime.errorReporting.deliveryLog.stats().queued === 1, 'B\'s attempt queued for the log');
    // Each instance's background writer runs on its own clock (a write every 100 ms).
    for (const t of [a, b]) (t.clock as FakeClock).advance(100);
    for (const client of [a.client, onB]) {
      await eventually(async () => (await client.errorReporting.listAttempts()).total_items === 2, 'both attempts listed');
      const codes = await Promise.all((await client.errorReporting.listAttempts()).items.map(async (i) => (await client.errorReporting.getAttempt(i.id)).payload.code));
      assert.deepEqual(codes.sort(), [401, 402]);
    }

    receiver.setBehaviour({ kind: 'status', status: 500 });
    a.runtime.errorReports.submit(report(403));
    await receiver.waitFor(4);
    await eventually(() => (b.runtime.errorReporting.dispatcher.endpointState(receiver.url)?.pausedUntil ?? null) !== null, 'B paused too');
    receiver.setBehaviour({ kind: 'status', status: 200 });
    assert.equal((await a.client.errorReporting.resume()).endpoint?.paused_until, null);
    await eventually(() => b.runtime.errorReporting.dispatcher.endpointState(receiver.url)?.pausedUntil === null, 'B resumed too');
    assert.equal(b.runtime.errorReports.submit(report(404)), 'queued');
    await receiver.waitFor(5);
  });
});
