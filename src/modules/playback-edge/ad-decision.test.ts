import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import { decideWithin, SimulatedAdDecisionServer, type AdDecisionRequest, type AdDecisionServer } from './ad-decision.js';

const request = (latencyMs: number): AdDecisionRequest => ({
  owner: 'o', contentId: 'c', session: 's', targeting: {},
  config: { name: 'pre', adServerUrl: 'https://ads.example.com', adAssetIds: ['ad-one', 'ad-two'], simulatedLatencyMs: latencyMs },
});
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

test('the simulated server answers the configuration\'s ad assets, in order, after its latency', async () => {
  const clock = new FakeClock();
  const server = new SimulatedAdDecisionServer(clock);
  assert.deepEqual(await server.decide(request(0)), ['ad-one', 'ad-two']);
  let done = false;
  const pending = decideWithin(server, request(300), clock, 1000).then((o) => ((done = true), o));
  clock.advance(299);
  await tick();
  assert.equal(done, false);
  clock.advance(1);
  assert.equal((await pending).kind, 'ads');
  assert.equal(clock.pendingTimers(), 0, 'the timeout timer is cancelled');
});

test('a decision slower than the timeout ends as a timeout at the timeout', async () => {
  const clock = new FakeClock();
  let done = false;
  const pending = decideWithin(new SimulatedAdDecisionServer(clock), request(5000), clock, 1000).then((o) => ((done = true), o));
  clock.advance(999);
  await tick();
  assert.equal(done, false);
  clock.advance(1);
  assert.deepEqual(await pending, { kind: 'timeout' });
});

test('a failing ad server is a failure, not a rejection', async () => {
  const failing: AdDecisionServer = { decide: () => Promise.reject(new Error('boom')) };
  const outcome = await decideWithin(failing, request(0), new FakeClock(), 1000);
  assert.equal(outcome.kind, 'failed');
});
