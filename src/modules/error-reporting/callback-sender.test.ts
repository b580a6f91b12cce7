import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker as WorkerThread } from 'node:worker_threads';
import type { Worker } from 'node:worker_threads';
import type { CallbackRequest } from './callback-client.js';
import { ThreadedCallbackSender } from './callback-sender.js';
import { closedLoopbackPort, startLocalReceiver } from './testing/local-receiver.js';
import type { LocalReceiver } from './testing/local-receiver.js';

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

/** A receiver on a thread of its own, so it answers while this test holds the event loop. */
const threadReceiver = async (): Promise<{ url: string; close: () => Promise<number> }> => {
  const code = `
    const { createServer } = require('node:http');
    const { parentPort } = require('node:worker_threads');
    const server = createServer((req, res) => { req.resume(); req.on('end', () => res.end()); });
    server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
    parentPort.on('message', () => server.close(() => process.exit(0)));
  `;
  const worker = new WorkerThread(code, { eval: true });
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));
  return {
    url: `http://127.0.0.1:${port}/cb`,
    close: () => {
      worker.postMessage('close');
      return new Promise((resolve) => worker.once('exit', resolve));
    },
  };
};

test('while the event loop is busy, the answers that come in meanwhile arrive together', opts, async () => {
  const other = await threadReceiver();
  try {
    await sender.deliver(other.url, request);
    const thread = threadOf(sender);
    assert.ok(thread);
    let messages = 0;
    const count = () => (messages += 1);
    thread.on('message', count);
    // 40 requests over 4 connections: at least 10 rounds on the thread, each answered in a turn of its own.
    const outcomes = Array.from({ length: 40 }, () => sender.deliver(other.url, request));
    await new Promise((resolve) => setImmediate(resolve));
    const heldUntil = Date.now() + 500;
    while (Date.now() < heldUntil) {
      // busy: the thread sends everything and gets every answer meanwhile
    }
    for (const outcome of await Promise.all(outcomes)) assert.equal(outcome.outcome, 'delivered');
    thread.off('message', count);
    assert.ok(messages <= 3, `${messages} answer messages for 40 requests`);
  } finally {
    await other.close();
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
