import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { FakeClock } from '../clock.js';
import { enforceBodyDeadlines } from './connection-limits.js';
import type { App } from './types.js';

// The body deadline on the runtime clock, through app.inject: light-my-request's socket has no
// destroy() or write(), so a deadline that assumed a real socket threw `socket.destroy is not a
// function` once a file ran past it. The fake clock decides when the deadline falls, not the load.
const settings = { requestTimeoutMs: 30_000, streamedBodyMinRate: 1024 };

/** An app with the deadline on `clock`: POST /refused answers 401 before reading, POST /read reads the body. */
async function appOn(clock: FakeClock): Promise<App> {
  const app: App = Fastify().withTypeProvider<TypeBoxTypeProvider>();
  enforceBodyDeadlines(app, settings, clock);
  app.post('/refused', { onRequest: async (_request, reply) => reply.code(401).send({ code: 'unauthorized' }) }, () => ({ ok: true }));
  app.post('/read', (request) => ({ got: request.body }));
  await app.ready();
  after(() => app.close());
  return app;
}

/** A body that starts and never ends: its headers promise more than ever arrives. */
function stalledBody(): PassThrough {
  const body = new PassThrough();
  body.write('{"partial":');
  return body;
}

/** Lets the request's I/O callbacks run (no time is measured or assumed). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

test('an injected request refused before its body: the deadline passing on the clock ends it quietly, nothing thrown', async () => {
  const clock = new FakeClock();
  const app = await appOn(clock);
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  after(() => process.off('uncaughtException', onUncaught));
  const body = stalledBody();
  const response = await app.inject({ method: 'POST', url: '/refused', headers: { 'content-type': 'application/json', 'content-length': '1000' }, payload: body });
  assert.equal(response.statusCode, 401);
  assert.equal(clock.pendingTimers(), 1, 'the deadline is armed on the runtime clock, not a real timer');
  clock.advance(settings.requestTimeoutMs);
  await settle();
  assert.deepEqual(uncaught, []);
  assert.equal(clock.pendingTimers(), 0);
  clock.advance(settings.requestTimeoutMs); // once only: nothing fires twice
  await settle();
  assert.deepEqual(uncaught, []);
});

test('an injected body that stops arriving is answered 408 request_timeout when the clock passes the deadline', async () => {
  const clock = new FakeClock();
  const app = await appOn(clock);
  const answer = app.inject({ method: 'POST', url: '/read', headers: { 'content-type': 'application/json', 'content-length': '1000' }, payload: stalledBody() });
  await settle();
  clock.advance(settings.requestTimeoutMs - 1);
  await settle();
  assert.equal(clock.pendingTimers(), 1, 'not yet: one millisecond before the deadline');
  clock.advance(1);
  const response = await answer;
  assert.equal(response.statusCode, 408);
  assert.equal(response.json<{ code: string }>().code, 'request_timeout');
});

test('a body that arrives whole disarms the deadline (no timer left behind)', async () => {
  const clock = new FakeClock();
  const app = await appOn(clock);
  const response = await app.inject({ method: 'POST', url: '/read', payload: { a: 1 } });
  assert.deepEqual(response.json(), { got: { a: 1 } });
  assert.equal(clock.pendingTimers(), 0);
});
