import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../platform/worker-thread.js';
import type { CallbackRequest } from '../../platform/outbound/delivery-client.js';
import { ThreadedCallbackSender } from './callback-sender.js';
import type { CallbackSenderStart, SenderAnswer, SenderRequest } from './callback-sender.js';
import { closedLoopbackPort, startLocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import type { LocalReceiver } from '../../platform/outbound/testing/local-receiver.js';

// Every address here is loopback (the allow-list admits 127.0.0.1 only), so the thread's own DNS is never asked.
const request: CallbackRequest = { body: '{"owner":"ws1","code":404}', headers: { 'webhook-id': 'msg_1', 'webhook-signature': 'v1,abc' } };
const opts = { timeout: 20_000 };

let receiver: LocalReceiver;
const errors: string[] = [];
const newSender = () =>
  new ThreadedCallbackSender({ allowList: '127.0.0.1/32', timeoutMs: 2_000, connectionsPerEndpoint: 4, onError: (message) => errors.push(message) });
let sender: ThreadedCallbackSender;

/** The thread behind a sender, reached past its privacy to stop it as a crash would. */
const threadOf = (s: ThreadedCallbackSender): Worker | undefined => (s as unknown as { worker: Worker | undefined }).worker;

before(async () => {
  receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
  sender = newSender();
});

after(async () => {
  await sender.close();
  await receiver.close();
});

test('a request reaches the receiver from the thread with its body and headers, and its outcome comes back', opts, async () => {
  receiver.setBehaviour({ kind: 'status', status: 200 });
  const seen = receiver.count();
  const outcome = await sender.deliver(receiver.url, request);
  assert.equal(outcome.outcome, 'delivered');
  assert.equal(outcome.status, 200);
  const got = receiver.received[seen];
  assert.ok(got);
  assert.equal(got.body, request.body);
  assert.equal(got.headers['content-type'], 'application/json');
  assert.equal(got.headers['webhook-id'], 'msg_1');
  assert.equal(got.headers['webhook-signature'], 'v1,abc');
  assert.equal(sender.inFlight, 0);
});

test('every request handed over in one turn gets its own answer, in any mix of outcomes', opts, async () => {
  receiver.setBehaviour({ kind: 'status', status: 503 });
  const refusedUrl = `http://127.0.0.1:${await closedLoopbackPort()}/cb`;
  const urls = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? receiver.url : i % 3 === 1 ? refusedUrl : 'http://10.1.2.3/cb'));
  const outcomes = await Promise.all(urls.map((url, i) => sender.deliver(url, { body: `{"n":${i}}`, headers: {} })));
  outcomes.forEach((outcome, i) => {
    const expected = i % 3 === 0 ? 'non_200' : i % 3 === 1 ? 'refused' : 'ssrf_refused';
    assert.equal(outcome.outcome, expected, `request ${i}`);
    if (expected === 'non_200') assert.equal(outcome.status, 503);
  });
  assert.equal(sender.inFlight, 0);
});

/**
 * The answer messages of a thread the test started itself: `next` takes them in order as they
 * come, and none is counted as read in the shared count unless the test does so.
 */
const answerMessages = (thread: Worker) => {
  const messages: SenderAnswer[][] = [];
  let waiting: (() => void) | undefined;
  thread.on('message', (batch: SenderAnswer[]) => {
    messages.push(batch);
    waiting?.();
  });
  const next = (): Promise<SenderAnswer[]> =>
    new Promise((resolve) => {
      const take = () => {
        const batch = messages.shift();
        if (batch === undefined) return false;
        waiting = undefined;
        resolve(batch);
        return true;
      };
      if (!take()) waiting = take;
    });
  return { pending: () => messages.length, next };
};

test('the thread sends its next answer message only once the main thread has read the previous one', opts, async () => {
  // The thread itself, with this test in the main thread's place: it holds the count of messages
  // read (ThreadedCallbackSender bumps it on every message) and bumps it only when it chooses.
  const answersRead = new SharedArrayBuffer(4);
  const read = new Int32Array(answersRead);
  const markRead = () => {
    Atomics.add(read, 0, 1);
    Atomics.notify(read, 0);
  };
  const start: CallbackSenderStart = { allowList: '127.0.0.1/32', timeoutMs: 2_000, connectionsPerEndpoint: 1, answersRead };
  const thread = startWorker(import.meta.url, 'callback-sender.worker', { workerData: start });
  const answers = answerMessages(thread);
  try {
    receiver.setBehaviour({ kind: 'status', status: 200 });
    const seen = receiver.count();
    const ids = Array.from({ length: 10 }, (_, i) => i + 1);
    thread.postMessage(ids.map((id): SenderRequest => [id, receiver.url, request.body, request.headers]));
    // One connection: request k + 1 leaves the thread only once the answer to k came in, in an
    // event-loop turn of its own. So when the receiver (on this thread) has request 10, answers 1
    // to 8 reached the thread in eight turns; a thread that did not wait for the read would have
    // posted them in as many messages before writing request 10, and they are here by the turn
    // after. The order of events decides, not the machine's speed.
    await receiver.waitFor(seen + 10);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(answers.pending(), 1, 'one answer message while the main thread has not read it');
    const first = await answers.next();
    assert.deepEqual(first.map(([id]) => id), [1]);
    markRead();
    const second = await answers.next();
    const got = [...first, ...second];
    assert.ok(ids.slice(1, 8).every((id) => second.some(([answered]) => answered === id)), `answers 2 to 8 arrive together once read: ${JSON.stringify(second.map(([id]) => id))}`);
    while (got.length < ids.length) {
      markRead();
      got.push(...(await answers.next()));
    }
    assert.deepEqual(got.map(([id]) => id).sort((x, y) => x - y), ids, 'every request answered once');
    for (const [, outcome] of got) assert.equal(outcome.outcome, 'delivered');
  } finally {
    await thread.terminate();
  }
});

test('a thread that stops ends the requests it held as resets, and the next request starts a new one', opts, async () => {
  receiver.setBehaviour({ kind: 'hang' });
  const seen = receiver.count();
  const held = [sender.deliver(receiver.url, request), sender.deliver(receiver.url, request)];
  await receiver.waitFor(seen + 2);
  const thread = threadOf(sender);
  assert.ok(thread);
  await thread.terminate();
  const ended = await Promise.all(held);
  for (const outcome of ended) {
    assert.equal(outcome.outcome, 'reset');
    assert.match(outcome.detail ?? '', /callback sender thread stopped/);
  }
  assert.ok(errors.some((message) => /stopped .* holding 2 requests/.test(message)), errors.join('\n'));
  receiver.setBehaviour({ kind: 'status', status: 200 });
  const next = await sender.deliver(receiver.url, request);
  assert.equal(next.outcome, 'delivered');
  assert.notEqual(threadOf(sender), thread);
});

test('closing ends what the thread still holds as resets, and later requests at once', opts, async () => {
  const own = newSender();
  receiver.setBehaviour({ kind: 'hang' });
  const seen = receiver.count();
  const held = own.deliver(receiver.url, request);
  await receiver.waitFor(seen + 1);
  await own.close();
  assert.equal((await held).outcome, 'reset');
  const late = await own.deliver(receiver.url, request);
  assert.equal(late.outcome, 'reset');
  assert.match(late.detail ?? '', /closed/);
  assert.equal(own.inFlight, 0);
});
