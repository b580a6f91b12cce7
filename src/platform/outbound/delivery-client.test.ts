import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCallbackAllowList } from '../net/callback-allowlist.js';
import { createOutbound } from '../net/outbound.js';
import type { HostResolver } from '../net/ssrf-guard.js';
import { CallbackClient } from './delivery-client.js';
import type { CallbackRequest } from './delivery-client.js';
import { closedLoopbackPort, startLocalReceiver } from './testing/local-receiver.js';
import type { LocalReceiver } from './testing/local-receiver.js';

// Every address here is loopback; the fake resolver keeps DNS off the network.
const resolver: HostResolver = {
  resolve: (hostname) =>
    hostname === 'receiver.test' ? Promise.resolve([{ address: '127.0.0.1', family: 4 }]) : Promise.reject(new Error('ENOTFOUND')),
};
const outbound = createOutbound({ resolver, allowList: parseCallbackAllowList('127.0.0.1/32,receiver.test') });
const request: CallbackRequest = { body: '{"owner":"ws1","code":404}', headers: { 'webhook-id': 'msg_1' } };
const opts = { timeout: 10_000 };

let receiver: LocalReceiver;
let client: CallbackClient;

before(async () => {
  receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 5_000 });
  // Short timeout so the slow receiver test is quick; the default is 5 s.
  client = new CallbackClient({ outbound, timeoutMs: 300 });
});

after(async () => {
  await client.close();
  await receiver.close();
});

test('a 200 is delivered, with the body and headers as given', opts, async () => {
  receiver.setBehaviour({ kind: 'status', status: 200 });
  const before = receiver.count();
  const outcome = await client.deliver(receiver.url, request);
  assert.equal(outcome.outcome, 'delivered');
  assert.equal(outcome.status, 200);
  assert.ok(outcome.latencyMs >= 0);
  const got = receiver.received[before];
  assert.ok(got);
  assert.equal(got.body, request.body);
  assert.equal(got.headers['content-type'], 'application/json');
  assert.equal(got.headers['webhook-id'], 'msg_1');
});

test('a 500 is non_200 with its status', opts, async () => {
  receiver.setBehaviour({ kind: 'status', status: 500 });
  const outcome = await client.deliver(receiver.url, request);
  assert.equal(outcome.outcome, 'non_200');
  assert.equal(outcome.status, 500);
});

test('a redirect is not followed', opts, async () => {
  const target = await startLocalReceiver();
  try {
    receiver.setBehaviour({ kind: 'redirect', location: target.url });
    const outcome = await client.deliver(receiver.url, request);
    assert.equal(outcome.outcome, 'non_200');
    assert.equal(outcome.status, 302);
    assert.match(outcome.detail ?? '', /redirect to .* not followed/);
    assert.equal(target.count(), 0);
  } finally {
    await target.close();
  }
});

test('a receiver slower than the timeout is a timeout', opts, async () => {
  receiver.setBehaviour({ kind: 'hang' });
  const outcome = await client.deliver(receiver.url, request);
  assert.equal(outcome.outcome, 'timeout');
  assert.equal(outcome.status, null);
});

test('a receiver that closes the socket is a reset', opts, async () => {
  receiver.setBehaviour({ kind: 'close_socket' });
  const outcome = await client.deliver(receiver.url, request);
  assert.equal(outcome.outcome, 'reset');
});

test('a closed port is refused', opts, async () => {
  const port = await closedLoopbackPort();
  const outcome = await client.deliver(`http://127.0.0.1:${port}/hook`, request);
  assert.equal(outcome.outcome, 'refused');
  assert.equal(outcome.detail, 'ECONNREFUSED');
});

test('https to a plain HTTP receiver is a tls_error', opts, async () => {
  const outcome = await client.deliver(`https://127.0.0.1:${receiver.port}/hook`, request);
  assert.equal(outcome.outcome, 'tls_error');
});

test('a URL the guard refuses is never requested', opts, async () => {
  const strict = new CallbackClient({ outbound: createOutbound({ resolver }), timeoutMs: 300 });
  const before = receiver.count();
  const outcome = await strict.deliver(receiver.url, request);
  assert.equal(outcome.outcome, 'ssrf_refused');
  assert.match(outcome.detail ?? '', /loopback/);
  assert.equal(receiver.count(), before);
  await strict.close();
});

test('a host name is connected through the address the guard checked', opts, async () => {
  receiver.setBehaviour({ kind: 'status', status: 200 });
  const outcome = await client.deliver(`http://receiver.test:${receiver.port}/by-name`, request);
  assert.equal(outcome.outcome, 'delivered');
  assert.equal(receiver.received.at(-1)?.headers.host, `receiver.test:${receiver.port}`);
});

test('testCallback reports what it observed, including the receiver text', opts, async () => {
  receiver.setBehaviour({ kind: 'status', status: 404 });
  const failed = await client.testCallback(receiver.url, request);
  assert.equal(failed.outcome, 'non_200');
  assert.equal(failed.status, 404);
  assert.equal(failed.address, '127.0.0.1');
  assert.equal(failed.responseExcerpt, 'status 404');
  receiver.setBehaviour({ kind: 'status', status: 200 });
  assert.equal((await client.testCallback(receiver.url, request)).outcome, 'delivered');
  const refused = await client.testCallback('ftp://receiver.test/', request);
  assert.equal(refused.outcome, 'ssrf_refused');
});

test('keep-alive: many deliveries share a few connections', opts, async () => {
  receiver.setBehaviour({ kind: 'status', status: 200 });
  const pooled = new CallbackClient({ outbound, connectionsPerEndpoint: 4 });
  const connectionsBefore = receiver.connections();
  for (let round = 0; round < 3; round += 1) {
    const outcomes = await Promise.all(Array.from({ length: 40 }, () => pooled.deliver(receiver.url, request)));
    assert.ok(outcomes.every((o) => o.outcome === 'delivered'));
  }
  assert.ok(receiver.connections() - connectionsBefore <= 4, `${receiver.connections() - connectionsBefore} connections`);
  assert.equal(pooled.endpointCount, 1);
  await pooled.close();
});
