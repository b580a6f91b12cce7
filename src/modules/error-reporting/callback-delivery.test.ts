import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { FakeClock } from '../../platform/clock.js';
import { sequentialIds } from '../../platform/ids.js';
import { parseCallbackAllowList } from '../../platform/net/callback-allowlist.js';
import { createOutbound } from '../../platform/net/outbound.js';
import { CallbackClient } from '../../platform/outbound/delivery-client.js';
import { CallbackDispatcher } from './callback-dispatcher.js';
import type { CallbackDispatcherOptions } from './callback-dispatcher.js';
import type { DeliveryAttempt } from './delivery-log.js';
import type { ErrorReport } from './error-report.js';
import { settle } from './testing/fake-transport.js';
import { closedLoopbackPort, startLocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import type { LocalReceiver, ReceiverBehaviour } from '../../platform/outbound/testing/local-receiver.js';
import { generateSigningSecret, WebhookSigner } from '../../platform/outbound/webhook-signature.js';

// The dispatcher and the client share one fake clock: pauses and the 5 s timeout move only when told.
// Receivers are real HTTP servers on 127.0.0.1, admitted by the allow-list as in local development.
const opts = { timeout: 15_000 };
const secret = generateSigningSecret();
const signer = new WebhookSigner([secret]);
const outbound = createOutbound({ resolver: { resolve: () => Promise.reject(new Error('no DNS in tests')) }, allowList: parseCallbackAllowList('127.0.0.1/32') });
const receivers: LocalReceiver[] = [];
const cleanups: Array<() => Promise<void> | void> = [];

after(async () => {
  for (const cleanup of cleanups) await cleanup();
  await Promise.all(receivers.map((r) => r.close()));
});

const receiver = async (behaviour: ReceiverBehaviour): Promise<LocalReceiver> => {
  const started = await startLocalReceiver(behaviour, { hangLimitMs: 10_000 });
  receivers.push(started);
  return started;
};

const report = (owner: string): ErrorReport => ({
  owner,
  subtype: 'web',
  url: 'https://edge.example.com/play/a.m3u8',
  ip: '198.51.100.7',
  code: 403,
  ua: 'Player/2',
  msg: 'Invalid token signature',
  timestamp: 1_763_719_200,
  error_code: 999,
});

const setup = (url: string, options: Partial<CallbackDispatcherOptions> = {}) => {
  const clock = new FakeClock(Date.now());
  const client = new CallbackClient({ outbound, clock });
  const attempts: DeliveryAttempt[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const dispatcher = new CallbackDispatcher({
    transport: client,
    clock,
    ids: sequentialIds(),
    maxInFlight: 1,
    ...options,
    onAttempt: (_owner, attempt) => {
      attempts.push(attempt);
      for (const w of waiters.filter((x) => attempts.length >= x.n)) w.resolve();
    },
  });
  dispatcher.setRoute('ws1', { owner: 'ws1', url, signer });
  const attemptsReach = (n: number): Promise<void> =>
    attempts.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }));
  cleanups.push(() => dispatcher.close(), () => client.close());
  return { clock, dispatcher, attempts, attemptsReach };
};

test('200: reports arrive signed, and the published verifier accepts them', opts, async () => {
  const ok = await receiver({ kind: 'status', status: 200 });
  const { dispatcher, attemptsReach } = setup(ok.url, { maxInFlight: 2 });
  for (let i = 0; i < 3; i += 1) assert.equal(dispatcher.submit(report('ws1')), 'queued');
  await attemptsReach(3);
  assert.equal(ok.count(), 3);
  for (const got of ok.received) {
    const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
    assert.deepEqual(new Webhook(secret).verify(got.body, headers), report('ws1'));
  }
  assert.equal(dispatcher.deliveries('ws1').counters.delivered, 3);
});

test('500: the endpoint pauses, keeps its queue, and resumes after the backoff', opts, async () => {
  const failing = await receiver({ kind: 'status', status: 500 });
  const { clock, dispatcher, attempts, attemptsReach } = setup(failing.url);
  for (let i = 0; i < 3; i += 1) dispatcher.submit(report('ws1'));
  await attemptsReach(1);
  assert.deepEqual([attempts[0]?.outcome, attempts[0]?.status], ['non_200', 500]);
  const state = dispatcher.endpointState(failing.url);
  assert.equal(state?.pausedUntil, clock.now() + 1000);
  assert.equal(state?.queued, 2);
  assert.equal(dispatcher.submit(report('ws1')), 'paused');
  failing.setBehaviour({ kind: 'status', status: 200 });
  clock.advance(1000);
  await attemptsReach(3);
  assert.equal(failing.count(), 3);
  assert.equal(dispatcher.endpointState(failing.url)?.consecutiveFailures, 0);
});

test('slow past the timeout: unreachable, pending reports discarded, paused 5 s', opts, async () => {
  const slow = await receiver({ kind: 'hang' });
  const { clock, dispatcher, attempts, attemptsReach } = setup(slow.url);
  for (let i = 0; i < 4; i += 1) dispatcher.submit(report('ws1'));
  await slow.waitFor(1);
  clock.advance(5000);
  await attemptsReach(1);
  assert.equal(attempts[0]?.outcome, 'timeout');
  assert.equal(dispatcher.deliveries('ws1').counters.dropped.discarded, 3);
  assert.equal(dispatcher.endpointState(slow.url)?.pausedUntil, clock.now() + 5000);
  assert.equal(slow.count(), 1);
});

test('closing the socket: a reset, which pauses without discarding', opts, async () => {
  const closing = await receiver({ kind: 'close_socket' });
  const { clock, dispatcher, attempts, attemptsReach } = setup(closing.url);
  dispatcher.submit(report('ws1'));
  dispatcher.submit(report('ws1'));
  await attemptsReach(1);
  assert.equal(attempts[0]?.outcome, 'reset');
  assert.equal(dispatcher.endpointState(closing.url)?.pausedUntil, clock.now() + 1000);
  assert.equal(dispatcher.endpointState(closing.url)?.queued, 1);
});

test('redirect: not followed, counted as a non-200', opts, async () => {
  const elsewhere = await receiver({ kind: 'status', status: 200 });
  const redirecting = await receiver({ kind: 'redirect', location: elsewhere.url });
  const { dispatcher, attempts, attemptsReach } = setup(redirecting.url);
  dispatcher.submit(report('ws1'));
  await attemptsReach(1);
  assert.deepEqual([attempts[0]?.outcome, attempts[0]?.status], ['non_200', 302]);
  assert.equal(elsewhere.count(), 0);
});

test('closed port: refused, pending reports discarded, paused 5 s', opts, async () => {
  const port = await closedLoopbackPort();
  const url = `http://127.0.0.1:${port}/hook`;
  const { clock, dispatcher, attempts, attemptsReach } = setup(url);
  for (let i = 0; i < 3; i += 1) dispatcher.submit(report('ws1'));
  await attemptsReach(1);
  assert.equal(attempts[0]?.outcome, 'refused');
  assert.equal(dispatcher.deliveries('ws1').counters.dropped.discarded, 2);
  assert.equal(dispatcher.endpointState(url)?.pausedUntil, clock.now() + 5000);
});

test('a hanging receiver and 1,000,000 reports: queues and requests stay within their bounds', opts, async () => {
  const hanging = await receiver({ kind: 'hang' });
  const { dispatcher } = setup(hanging.url, { maxInFlight: 8, queueCapacity: 1000 });
  let queued = 0;
  for (let i = 0; i < 1_000_000; i += 1) {
    if (dispatcher.submit(report('ws1')) === 'queued') queued += 1;
    if (i % 50_000 === 0) await settle(); // let sending start, as between ingest batches
  }
  await hanging.waitFor(8);
  const stats = dispatcher.stats();
  assert.ok(stats.queued <= 1000, `queued ${stats.queued}`);
  assert.ok(stats.inFlight <= 8, `in flight ${stats.inFlight}`);
  assert.equal(queued + stats.totals.dropped.throttled, 1_000_000);
  assert.ok(hanging.count() <= 8, `${hanging.count()} requests reached the receiver`);
});
