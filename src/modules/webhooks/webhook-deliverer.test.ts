import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import { eventually } from '../../../test/helpers/eventually.js';
import { FakeClock, systemClock, type Clock } from '../../platform/clock.js';
import { randomIds } from '../../platform/ids.js';
import type { HostResolver, ResolvedAddress } from '../../platform/net/ssrf-guard.js';
import { outboundOf } from '../../platform/net/outbound.js';
import { SecretBox } from '../../platform/secret-box.js';
import type { CallbackRequest, CallbackTransport } from '../../platform/outbound/delivery-client.js';
import type { DeliveryOutcome } from '../../platform/outbound/delivery-outcome.js';
import { createWebhooks, type Webhooks } from './webhooks.module.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const box = new SecretBox(Buffer.alloc(32, 7));
const settings = { outboundAllowlist: '', webhookMaxSubscriptions: 20, webhookMaxPending: 1000, webhookTimeoutMs: 2000, webhookConcurrency: 4, webhookPollMs: 100 };

const webhooksOn = (s: TestStorage, o: { clock: Clock; mode: 'embedded' | 'cluster'; resolver?: HostResolver; transport?: CallbackTransport }): Webhooks =>
  createWebhooks({
    config: settings, mode: o.mode, clock: o.clock, ids: randomIds, storage: s.storage, box, metrics: { registry: new Registry() }, log: silent,
    outbound: outboundOf(settings, o.clock, o.resolver), ...(o.transport ? { transport: o.transport } : {}),
  });

const workspace = async (s: TestStorage, id: string) => {
  await s.storage.db.insertInto('workspaces').values({ id, name: id, created_at: 0 }).execute();
};

describe('a subscription whose host later resolves to a private address (DNS rebinding)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  test('is refused at delivery (ssrf_refused, logged, retried later), not only when saved', async () => {
    const engines = await testEngines();
    const s = await (engines[0] as (typeof engines)[number]).open();
    cleanups.push(() => s.cleanup());
    await workspace(s, 'ws_dns');
    let answer: ResolvedAddress = { address: '93.184.215.14', family: 4 };
    const resolver: HostResolver = { resolve: async () => [answer] };
    const clock = new FakeClock();
    const webhooks = webhooksOn(s, { clock, mode: 'embedded', resolver });
    await webhooks.parts.work?.[0]?.start();
    cleanups.push(async () => webhooks.parts.work?.[0]?.stop());
    const sub = await webhooks.service.create('ws_dns', { url: 'http://hooks.example.test/playline', event_types: ['asset.ready'] });

    // The name now points at the cloud metadata service.
    answer = { address: '169.254.169.254', family: 4 };
    await webhooks.events.publish('ws_dns', 'asset.ready', { asset_id: 'a1', duration_ms: 1000, renditions: ['360p'] });
    await eventually(async () => (await webhooks.service.listAttempts('ws_dns', {})).total === 1, 'the attempt logged');
    const [attempt] = (await webhooks.service.listAttempts('ws_dns', {})).items;
    assert.equal(attempt?.outcome, 'ssrf_refused');
    assert.match(attempt?.detail ?? '', /^attempt 1 of 7: .*169\.254\.169\.254.*; next attempt at /);
    assert.equal((await webhooks.service.get('ws_dns', sub.id)).pending_deliveries, 1, 'kept for its retry');
  });
});

for (const engine of await testEngines()) {
  describe(`two instances on one ${engine.engine} database`, { skip: engine.skip || (engine.engine === 'sqlite' ? 'cluster mode runs on PostgreSQL' : false) }, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test('every attempt is made by one instance only: each event reaches the endpoint once', { timeout: 60_000 }, async () => {
      const s = await engine.open();
      cleanups.push(() => s.cleanup());
      await workspace(s, 'ws_pair');
      const received: Array<{ instance: string; id: string }> = [];
      const transport = (instance: string): CallbackTransport => ({
        async deliver(_url: string, request: CallbackRequest): Promise<DeliveryOutcome> {
          await new Promise((resolve) => setTimeout(resolve, 2));
          received.push({ instance, id: request.headers['webhook-id'] ?? '' });
          return { outcome: 'delivered', status: 200, latencyMs: 2 };
        },
      });
      const a = webhooksOn(s, { clock: systemClock, mode: 'cluster', transport: transport('a') });
      const b = webhooksOn(s, { clock: systemClock, mode: 'cluster', transport: transport('b') });
      for (const instance of [a, b]) {
        await instance.parts.work?.[0]?.start();
        cleanups.push(async () => instance.parts.work?.[0]?.stop());
      }
      await a.service.create('ws_pair', { url: 'https://93.184.215.14/hook', event_types: ['live.started'] });
      const events = 60;
      await Promise.all(Array.from({ length: events }, (_, i) => (i % 2 === 0 ? a : b).events.publish('ws_pair', 'live.started', { slicer_id: `s${i}`, state: 'live' })));
      await eventually(() => received.length >= events, `${events} deliveries`);
      await a.deliverer.claimNow();
      await b.deliverer.claimNow();
      assert.equal(received.length, events);
      assert.equal(new Set(received.map((r) => r.id)).size, events, 'no event sent twice');
      assert.equal((await a.service.listAttempts('ws_pair', { limit: 100 })).total, events, 'one logged attempt each');
    });
  });
}

describe('a shutdown during an attempt', () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  test('ends the attempt at once, does not count it, and the next start makes it again', { timeout: 60_000 }, async () => {
    const { startLocalReceiver } = await import('../../platform/outbound/testing/local-receiver.js');
    const engines = await testEngines();
    const s = await (engines[0] as (typeof engines)[number]).open();
    cleanups.push(() => s.cleanup());
    await workspace(s, 'ws_stop');
    const receiver = await startLocalReceiver({ kind: 'hang' }, { hangLimitMs: 30_000 });
    cleanups.push(() => receiver.close());
    const open = () => createWebhooks({
      config: { ...settings, outboundAllowlist: '127.0.0.1/32', webhookTimeoutMs: 30_000 }, mode: 'embedded', clock: systemClock, ids: randomIds,
      storage: s.storage, box, metrics: { registry: new Registry() }, log: silent, outbound: outboundOf({ outboundAllowlist: '127.0.0.1/32' }, systemClock),
    });
    const first = open();
    await first.parts.work?.[0]?.start();
    const sub = await first.service.create('ws_stop', { url: receiver.url, event_types: ['asset.failed'] });
    await first.events.publish('ws_stop', 'asset.failed', { asset_id: 'a1', reason: 'not media' });
    await receiver.waitFor(1);
    // The receiver never answers: only closing the client ends the attempt (the timeout is 30 s).
    await first.parts.work?.[0]?.stop();
    assert.equal((await first.service.listAttempts('ws_stop', {})).total, 0, 'the interrupted attempt is not logged');
    const [pending] = await s.storage.db.selectFrom('webhook_deliveries').selectAll().execute();
    assert.deepEqual([pending?.attempts, pending?.lease_owner], [0, null], 'not counted, its lease given back');

    receiver.setBehaviour({ kind: 'status', status: 200 });
    const second = open();
    await second.parts.work?.[0]?.start();
    cleanups.push(async () => second.parts.work?.[0]?.stop());
    await receiver.waitFor(2);
    await eventually(async () => (await second.service.listAttempts('ws_stop', {})).total === 1, 'the attempt made again and logged');
    const [attempt] = (await second.service.listAttempts('ws_stop', {})).items;
    assert.equal(attempt?.outcome, 'delivered');
    assert.equal(attempt?.detail, null, 'its first attempt');
    assert.equal((await second.service.get('ws_stop', sub.id)).pending_deliveries, 0);
  });
});
