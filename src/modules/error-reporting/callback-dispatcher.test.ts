import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { FakeClock } from '../../platform/clock.js';
import { sequentialIds } from '../../platform/ids.js';
import { CallbackDispatcher } from './callback-dispatcher.js';
import type { CallbackDispatcherOptions } from './callback-dispatcher.js';
import type { DroppedReport } from './delivery-log.js';
import type { ErrorReport } from './error-report.js';
import { FakeTransport, settle } from './testing/fake-transport.js';
import { generateSigningSecret, WebhookSigner } from '../../platform/outbound/webhook-signature.js';

const secret = generateSigningSecret();
const signer = new WebhookSigner([secret]);
const hookA = 'https://hooks.example.com/a';
const hookB = 'https://hooks.example.com/b';

const report = (owner = 'ws1', code = 404): ErrorReport => ({
  owner,
  subtype: 'web',
  url: 'https://edge.example.com/play/asset1.m3u8?exp=1',
  ip: '203.0.113.5',
  code,
  ua: 'TestPlayer/1.0',
  msg: 'Expired token',
  timestamp: 1_763_719_200,
  error_code: 999,
});

const setup = (options: Partial<CallbackDispatcherOptions> = {}) => {
  // Real wall time as the start, so the published verifier accepts the webhook timestamp.
  const clock = new FakeClock(Date.now());
  const transport = new FakeTransport();
  const dispatcher = new CallbackDispatcher({ transport, clock, ids: sequentialIds(), ...options });
  dispatcher.setRoute('ws1', { owner: 'ws1', url: hookA, signer });
  return { clock, transport, dispatcher };
};

const pausedFor = (dispatcher: CallbackDispatcher, clock: FakeClock, url = hookA): number | null => {
  const until = dispatcher.endpointState(url)?.pausedUntil ?? null;
  return until === null ? null : until - clock.now();
};

test('submit is synchronous; the report goes out signed, with the payload fields of the spec', async () => {
  const { transport, dispatcher } = setup();
  assert.equal(dispatcher.submit(report()), 'queued');
  assert.equal(transport.sent, 0, 'nothing is sent inside submit');
  await settle();
  assert.equal(transport.held.length, 1);
  const [held] = transport.held;
  assert.ok(held);
  assert.equal(held.url, hookA);
  const verified = new Webhook(secret).verify(held.request.body, held.request.headers);
  assert.deepEqual(verified, report());
  assert.deepEqual(Object.keys(JSON.parse(held.request.body)), ['owner', 'subtype', 'url', 'ip', 'code', 'ua', 'msg', 'timestamp', 'error_code']);
  assert.match(held.request.headers['webhook-id'] ?? '', /^msg_[0-9a-f]{32}$/);
  held.answer('delivered');
  await settle();
  const { counters, recent } = dispatcher.deliveries('ws1');
  assert.equal(counters.delivered, 1);
  assert.equal(recent[0]?.outcome, 'delivered');
  assert.equal(recent[0]?.status, 200);
});

test('a workspace without a callback gets no report and no counts', () => {
  const { dispatcher } = setup();
  assert.equal(dispatcher.submit(report('ws-other')), 'no_callback');
  assert.equal(dispatcher.deliveries('ws-other').counters.dropped.throttled, 0);
});

test('throttle: a burst, then the configured rate; what does not fit the queue is dropped as throttled', async () => {
  const { clock, transport, dispatcher } = setup({ ratePerSecond: 10, burst: 5, queueCapacity: 20, maxInFlight: 100 });
  const results = Array.from({ length: 30 }, () => dispatcher.submit(report()));
  assert.equal(results.filter((r) => r === 'queued').length, 20);
  assert.equal(results.filter((r) => r === 'throttled').length, 10);
  assert.equal(dispatcher.deliveries('ws1').counters.dropped.throttled, 10);
  await settle();
  assert.equal(transport.sent, 5, 'the burst');
  transport.answerAll('delivered');
  await settle();
  clock.advance(99);
  await settle();
  assert.equal(transport.sent, 5);
  clock.advance(1);
  await settle();
  assert.equal(transport.sent, 6, 'one token per 100 ms');
  clock.advance(1000);
  await settle();
  assert.equal(transport.sent, 16);
  assert.equal(dispatcher.endpointState(hookA)?.queued, 4);
});

test('non-200: the endpoint pauses 1 s, doubling per failure up to 2 minutes; a success resets it', async () => {
  const { clock, transport, dispatcher } = setup();
  const seen: number[] = [];
  for (let i = 0; i < 9; i += 1) {
    assert.equal(dispatcher.submit(report()), 'queued');
    await settle();
    transport.answerAll('non_200', 500);
    await settle();
    const pause = pausedFor(dispatcher, clock) ?? 0;
    seen.push(pause);
    assert.equal(dispatcher.submit(report()), 'paused');
    clock.advance(pause - 1);
    assert.equal(dispatcher.submit(report()), 'paused', 'still paused 1 ms before the end');
    clock.advance(1);
  }
  assert.deepEqual(seen, [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 120_000, 120_000]);
  assert.equal(dispatcher.deliveries('ws1').counters.dropped.paused, 18);
  assert.equal(dispatcher.deliveries('ws1').counters.non_200, 9);

  dispatcher.submit(report());
  await settle();
  transport.answerAll('delivered');
  await settle();
  assert.equal(dispatcher.endpointState(hookA)?.consecutiveFailures, 0);
  dispatcher.submit(report());
  await settle();
  transport.answerAll('non_200', 503);
  await settle();
  assert.equal(pausedFor(dispatcher, clock), 1000, 'back to the first step after a success');
});

test('non-200 keeps the pending reports and sends them when the pause ends', async () => {
  const { clock, transport, dispatcher } = setup({ maxInFlight: 1 });
  for (let i = 0; i < 3; i += 1) dispatcher.submit(report());
  await settle();
  transport.answerAll('non_200', 429);
  await settle();
  assert.equal(dispatcher.endpointState(hookA)?.queued, 2);
  assert.equal(transport.held.length, 0);
  clock.advance(1000);
  await settle();
  assert.equal(transport.held.length, 1, 'sending resumes after the pause');
  transport.answerAll('delivered');
  await settle();
  transport.answerAll('delivered');
  await settle();
  assert.equal(dispatcher.deliveries('ws1').counters.delivered, 2);
});

test('unreachable: pending reports are discarded and the endpoint pauses, growing to 2 minutes', async () => {
  const { clock, transport, dispatcher } = setup({ maxInFlight: 1 });
  for (let i = 0; i < 5; i += 1) dispatcher.submit(report());
  await settle();
  transport.answerAll('refused');
  await settle();
  const state = dispatcher.endpointState(hookA);
  assert.equal(state?.queued, 0);
  assert.equal(dispatcher.deliveries('ws1').counters.dropped.discarded, 4);
  assert.equal(dispatcher.deliveries('ws1').counters.unreachable, 1);
  const pauses = [pausedFor(dispatcher, clock)];
  for (const outcome of ['timeout', 'tls_error', 'refused', 'timeout', 'ssrf_refused', 'refused'] as const) {
    clock.advance(pauses.at(-1) ?? 0);
    dispatcher.submit(report());
    await settle();
    transport.answerAll(outcome);
    await settle();
    pauses.push(pausedFor(dispatcher, clock));
  }
  assert.deepEqual(pauses, [5000, 10_000, 20_000, 40_000, 80_000, 120_000, 120_000]);
});

test('answers to requests sent before a pause do not escalate it', async () => {
  const { clock, transport, dispatcher } = setup({ maxInFlight: 4 });
  for (let i = 0; i < 4; i += 1) dispatcher.submit(report());
  await settle();
  assert.equal(transport.held.length, 4);
  transport.answerAll('non_200', 500);
  await settle();
  assert.equal(pausedFor(dispatcher, clock), 1000);
  assert.equal(dispatcher.endpointState(hookA)?.consecutiveFailures, 1);
  assert.equal(dispatcher.deliveries('ws1').counters.non_200, 4);
});

test('a changed callback takes effect at once: queued reports for the old URL are discarded', async () => {
  const { transport, dispatcher } = setup({ maxInFlight: 1 });
  for (let i = 0; i < 3; i += 1) dispatcher.submit(report());
  await settle();
  dispatcher.setRoute('ws1', { owner: 'ws1', url: hookB, signer });
  assert.deepEqual(
    { queued: dispatcher.endpointState(hookA)?.queued, inFlight: dispatcher.endpointState(hookA)?.inFlight },
    { queued: 0, inFlight: 1 },
    'the old endpoint keeps only its request in flight',
  );
  dispatcher.submit(report());
  await settle();
  assert.deepEqual(transport.held.map((h) => h.url), [hookA, hookB]);
  assert.equal(dispatcher.deliveries('ws1').counters.dropped.discarded, 2);
  transport.answerAll('delivered');
  await settle();
  assert.equal(dispatcher.endpointState(hookA), undefined, 'the old endpoint is forgotten once idle');
  dispatcher.setRoute('ws1', undefined);
  assert.equal(dispatcher.submit(report()), 'no_callback');
});

test('two workspaces on one URL share its throttle but keep their own counters and rings', async () => {
  const { transport, dispatcher } = setup({ recentPerWorkspace: 3 });
  dispatcher.replaceRoutes([
    { owner: 'ws1', url: hookA, signer },
    { owner: 'ws2', url: hookA, signer },
  ]);
  for (let i = 0; i < 5; i += 1) {
    dispatcher.submit(report('ws1', 400 + i));
    dispatcher.submit(report('ws2'));
  }
  // Answered one at a time, in the order sent: the attempts are recorded in that order.
  const sentForWs1: string[] = [];
  for (let round = 0; round < 10 && (transport.held.length > 0 || round === 0); round += 1) {
    await settle();
    for (const held of [...transport.held]) {
      if ((JSON.parse(held.request.body) as ErrorReport).owner === 'ws1') sentForWs1.push(held.request.headers['webhook-id'] ?? '');
      held.answer('delivered');
      await settle();
    }
  }
  const ws1 = dispatcher.deliveries('ws1');
  assert.equal(ws1.counters.delivered, 5);
  assert.equal(sentForWs1.length, 5);
  assert.deepEqual(ws1.recent.map((a) => a.webhookId), sentForWs1.slice(-3).reverse(), 'the ring keeps the newest attempts only, newest first');
  assert.equal(dispatcher.deliveries('ws2').counters.delivered, 5);
  assert.equal(dispatcher.stats().endpoints, 1);
});

test('a receiver that never answers: 1,000,000 reports keep every queue within its bound', async () => {
  const { transport, dispatcher } = setup({ queueCapacity: 1000, maxInFlight: 8, totalQueueCapacity: 5000 });
  const owners = Array.from({ length: 10 }, (_, i) => `ws${i}`);
  dispatcher.replaceRoutes(owners.map((owner) => ({ owner, url: `${hookA}/${owner}`, signer })));
  const outcomes = new Map<string, number>();
  for (let i = 0; i < 1_000_000; i += 1) {
    const result = dispatcher.submit(report(owners[i % owners.length]));
    outcomes.set(result, (outcomes.get(result) ?? 0) + 1);
    if (i % 100_000 === 0) await settle();
  }
  await settle();
  const stats = dispatcher.stats();
  assert.ok(stats.queued <= 5000, `queued ${stats.queued}`);
  assert.ok(stats.inFlight <= 10 * 8);
  assert.equal(transport.held.length, stats.inFlight);
  for (const owner of owners) assert.ok((dispatcher.endpointState(`${hookA}/${owner}`)?.queued ?? 0) <= 1000);
  const dropped = stats.totals.dropped;
  assert.equal(dropped.throttled + dropped.overloaded + (outcomes.get('queued') ?? 0), 1_000_000);
  assert.ok(dropped.overloaded > 0, 'the process-wide bound was reached');
  dispatcher.close();
  assert.equal(dispatcher.stats().queued, 0);
});

test('a failure after an answer (an attempt hook that throws) is reported, never an unhandled rejection, and sending goes on', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const errors: Array<[string, unknown]> = [];
    const { transport, dispatcher } = setup({
      maxInFlight: 1,
      onAttempt: () => {
        throw new Error('metrics hook broke');
      },
      onError: (message, error) => void errors.push([message, error]),
    });
    dispatcher.submit(report('ws1', 401));
    dispatcher.submit(report('ws1', 402));
    await settle();
    assert.equal(transport.held.length, 1, 'one in flight at a time');
    transport.answerAll('delivered');
    await settle();
    await settle();
    assert.deepEqual(errors.map(([message, error]) => [message, (error as Error).message]), [['error-reporting: settling a callback attempt failed', 'metrics hook broke']]);
    assert.deepEqual(unhandled, []);
    assert.equal(transport.held.length, 1, 'the next report was still sent');
    assert.equal(JSON.parse(transport.held[0]?.request.body ?? '{}').code, 402);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('every drop (throttled, overloaded, discarded, paused) is offered to the delivery log with its reason and the request it would have been sent as', async () => {
  const offered: Array<{ owner: string; make: () => DroppedReport }> = [];
  const { transport, dispatcher } = setup({ queueCapacity: 2, totalQueueCapacity: 3, maxInFlight: 1, onDrop: (owner, make) => offered.push({ owner, make }) });
  dispatcher.setRoute('ws2', { owner: 'ws2', url: hookB, signer });
  assert.deepEqual([dispatcher.submit(report('ws1', 401)), dispatcher.submit(report('ws1', 402)), dispatcher.submit(report('ws1', 403))], ['queued', 'queued', 'throttled']);
  assert.deepEqual([dispatcher.submit(report('ws2', 404)), dispatcher.submit(report('ws2', 405))], ['queued', 'overloaded']);
  await settle();
  // hookA: 401 in flight, 402 waiting; it turns out unreachable, so 402 is discarded and hookA pauses.
  transport.held.find((h) => h.url === hookA)?.answer('refused');
  await settle();
  assert.equal(dispatcher.submit(report('ws1', 406)), 'paused');

  const built = offered.map(({ owner, make }) => ({ owner, ...make() }));
  assert.deepEqual(built.map((d) => [d.owner, d.attempt.detail, d.attempt.url, JSON.parse(d.request.body).code]), [
    ['ws1', 'throttled', hookA, 403],
    ['ws2', 'overloaded', hookB, 405],
    ['ws1', 'discarded', hookA, 402],
    ['ws1', 'paused', hookA, 406],
  ]);
  for (const d of built) {
    assert.equal(d.attempt.outcome, 'dropped');
    assert.equal(d.attempt.status, null);
    assert.equal(d.request.headers['webhook-id'], d.attempt.webhookId);
    assert.deepEqual(new Webhook(secret).verify(d.request.body, d.request.headers), JSON.parse(d.request.body), 'signed as it would have been sent');
  }
  assert.equal(new Set(built.map((d) => d.attempt.webhookId)).size, built.length);
  const { dropped } = dispatcher.deliveries('ws1').counters;
  assert.deepEqual(dropped, { throttled: 1, paused: 1, discarded: 1, overloaded: 0 });
});

test('reports discarded because their callback was removed are offered signed with the removed route; a throwing onDrop never reaches submit', async () => {
  const offered: DroppedReport[] = [];
  const errors: string[] = [];
  const { dispatcher } = setup({ maxInFlight: 1, onDrop: (_owner, make) => offered.push(make()), onError: (message) => errors.push(message) });
  dispatcher.submit(report('ws1', 410));
  dispatcher.submit(report('ws1', 411));
  await settle();
  dispatcher.setRoute('ws1', undefined);
  assert.equal(offered.length, 1);
  const [removed] = offered;
  assert.ok(removed);
  assert.equal(removed.attempt.detail, 'discarded');
  assert.deepEqual(new Webhook(secret).verify(removed.request.body, removed.request.headers), report('ws1', 411));

  const throwing = setup({ onDrop: () => { throw new Error('log broke'); }, onError: (message) => errors.push(message) });
  throwing.dispatcher.setRoute('ws1', { owner: 'ws1', url: hookA, signer });
  throwing.dispatcher.pauseFromPeer(hookA, throwing.clock.now() + 1000, 1);
  assert.equal(throwing.dispatcher.submit(report()), 'paused');
  assert.deepEqual(errors, ['error-reporting: logging a dropped report failed']);
});
