import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterPair, clusterPairProblem, type ClusterPair } from '../../../test/helpers/cluster-pair.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { placeFakeAssets } from './testing/edge-test-kit.js';
import type { FakeClock } from '../../platform/clock.js';
import { startLocalReceiver, type LocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import { testEdge, type TestEdge } from './testing/edge-test-kit.js';

const LIMIT = 5;
const FLOODER = '198.51.100.7';
const limitEnv = { PLAYLINE_PLAYBACK_REFUSAL_LIMIT: String(LIMIT), PLAYLINE_PLAYBACK_REFUSAL_WINDOW_S: '60' };

/** A playback URL of the app's workspace signed with the wrong key (110). */
const badlySigned = (t: TestApp, asset: string) => t.client.playback.url(asset, { key: 'not-the-key' });
const playFrom = (t: TestApp, ip: string, url: string) => t.app.inject({ method: 'GET', url, remoteAddress: ip });

describe('refused playbacks are rate limited per client address', () => {
  let t: TestApp;
  let edge: TestEdge;
  let receiver: LocalReceiver;
  before(async () => {
    edge = testEdge();
    t = await createTestApp({ env: { ...limitEnv, PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' }, overrides: { playbackEdge: edge.overrides } });
    // 'flooded' is in the library, so its refusals count on the asset (not for the workspace only).
    await placeFakeAssets(t, t.workspace.id, ['movie', 'flooded']);
    receiver = await startLocalReceiver();
    await t.client.errorReporting.putSettings({ callback_url: receiver.url, enabled: true });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  test(`of ${LIMIT + 3} badly signed playbacks from one address the first ${LIMIT} are counted and reported, the rest answer 429 with neither`, async () => {
    const before = edge.events.length;
    const answers = [];
    for (let i = 0; i < LIMIT + 3; i++) answers.push(await playFrom(t, FLOODER, badlySigned(t, 'flooded')));
    assert.deepEqual(answers.map((r) => [r.statusCode, r.headers['x-playback-error-code']]), [
      ...Array.from({ length: LIMIT }, () => [403, '110']),
      [429, undefined], [429, undefined], [429, undefined],
    ]);
    const throttled = answers[LIMIT];
    assert.equal(throttled?.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(throttled?.headers['retry-after'], '60');
    assert.equal(throttled?.json().code, 'throttled');
    assert.equal(throttled?.json().status, 429);

    const emitted = edge.events.slice(before);
    assert.deepEqual(emitted.map((e) => e.type), Array.from({ length: LIMIT }, () => ['request', 'error']).flat());
    await t.runtime.playbackEdge.events.flush();
    const { stats } = await t.client.vodStats.asset('flooded');
    assert.equal(stats.sessions.requests, LIMIT);
    assert.deepEqual(stats.errors, { 110: LIMIT });

    // Every report handed to the dispatcher is queued, in flight, or delivered by now (all events are flushed).
    await receiver.waitFor(LIMIT);
    const { queued, inFlight, totals } = t.runtime.errorReporting.dispatcher.stats();
    assert.equal(queued + inFlight + totals.delivered + totals.failed, LIMIT, 'exactly the counted refusals were reported');
    assert.equal(receiver.count(), LIMIT);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /^playline_playback_edge_playbacks_total\{result="throttled"\} 3$/m);
  });

  test('another address is still answered and counted', async () => {
    const before = edge.events.length;
    const response = await playFrom(t, '203.0.113.9', badlySigned(t, 'flooded'));
    assert.equal(response.statusCode, 403);
    assert.equal(edge.events.slice(before).filter((e) => e.type === 'error').length, 1);
  });

  test('a valid playback from the throttled address is still served (valid playbacks never count)', async () => {
    for (let i = 0; i < LIMIT + 1; i++) {
      const response = await playFrom(t, FLOODER, t.client.playback.url('movie'));
      assert.equal(response.statusCode, 200, response.body);
    }
    assert.equal((await playFrom(t, FLOODER, badlySigned(t, 'flooded'))).statusCode, 429, 'still over the limit');
  });

  test('once the window has passed (fake clock) the address is counted again', async () => {
    (t.clock as FakeClock).advance(60_000);
    const before = edge.events.length;
    assert.equal((await playFrom(t, FLOODER, badlySigned(t, 'flooded'))).statusCode, 403);
    assert.equal(edge.events.slice(before).filter((e) => e.type === 'error').length, 1);
  });

  test('IPv6 addresses of one /64 share a count', async () => {
    const statuses = [];
    for (let i = 1; i <= LIMIT + 1; i++) statuses.push((await playFrom(t, `2001:db8:1:2::${i.toString(16)}`, badlySigned(t, 'v6'))).statusCode);
    assert.deepEqual(statuses, [...Array.from({ length: LIMIT }, () => 403), 429]);
  });
});

describe('the refused-playback limit turned off (0)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_PLAYBACK_REFUSAL_LIMIT: '0' } });
  });
  after(() => t.close());

  test('every refusal is answered as such', async () => {
    for (let i = 0; i < 100; i++) assert.equal((await playFrom(t, FLOODER, badlySigned(t, 'any'))).statusCode, 403);
  });
});

const clusterProblem = await clusterPairProblem();

describe('in cluster mode the refused-playback limit holds across instances (Redis)', { skip: clusterProblem }, () => {
  let pair: ClusterPair;
  before(async () => {
    pair = await clusterPair({ env: limitEnv });
    await placeFakeAssets(pair.b, pair.b.workspace.id, ['movie']);
  });
  after(() => pair?.close());

  test(`${LIMIT} refusals spread over two instances use up one address's count on both`, async () => {
    const { a, b } = pair;
    const statuses = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await playFrom(i % 2 === 0 ? a : b, FLOODER, badlySigned(a, 'flooded'))).statusCode);
    statuses.push((await playFrom(a, FLOODER, badlySigned(a, 'flooded'))).statusCode);
    statuses.push((await playFrom(b, FLOODER, badlySigned(b, 'flooded'))).statusCode);
    assert.deepEqual(statuses, [...Array.from({ length: LIMIT }, () => 403), 429, 429]);
    assert.equal((await playFrom(b, '203.0.113.9', badlySigned(b, 'flooded'))).statusCode, 403, 'another address is counted apart');
    assert.equal((await playFrom(b, FLOODER, b.client.playback.url('movie'))).statusCode, 200, 'valid playbacks are served');
  });
});
