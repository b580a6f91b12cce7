import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testRedis } from '../../../test/helpers/redis.js';
import { FakeClock } from '../../platform/clock.js';
import { sequentialIds } from '../../platform/ids.js';
import { CallbackDispatcher } from './callback-dispatcher.js';
import type { ErrorReportInput } from './error-report.js';
import { FakeTransport, settle } from './testing/fake-transport.js';
import { generateSigningSecret, WebhookSigner } from '../../platform/outbound/webhook-signature.js';
import { callbackLinkOf } from './callback-link.js';
import { ChangeFeed } from '../../platform/cluster/change-feed.js';
import { eventually } from '../../../test/helpers/eventually.js';

const redis = await testRedis();
after(() => redis.cleanup());

const hook = 'https://hooks.example.com/shared';
const signer = new WebhookSigner([generateSigningSecret()]);
const report: ErrorReportInput = { owner: 'ws1', url: 'https://edge/x.m3u8', ip: '203.0.113.5', code: 404, ua: 'ua', msg: 'm', timestamp: 1 };

describe('callback delivery state across instances', { skip: redis.skip }, () => {
  test('an endpoint paused by one instance is paused on the others at once', async () => {
    const prefix = `${redis.prefix()}feed:`;
    const clock = new FakeClock();
    const instance = async (id: string) => {
      const feed = new ChangeFeed({ publisher: redis.client(), subscriber: redis.client(), prefix, instanceId: id });
      const link = callbackLinkOf(feed);
      const transport = new FakeTransport();
      const dispatcher = new CallbackDispatcher({ transport, clock, ids: sequentialIds(), onPause: link.paused.bind(link) });
      dispatcher.setRoute('ws1', { owner: 'ws1', url: hook, signer });
      const settings: string[] = [];
      await link.listen({ settings: (owner) => settings.push(owner), pause: (url, until, failures) => dispatcher.pauseFromPeer(url, until, failures) });
      return { link, transport, dispatcher, settings, feed };
    };
    const a = await instance('a');
    const b = await instance('b');
    assert.equal(a.dispatcher.submit(report), 'queued');
    await settle();
    a.transport.answerAll('non_200', 503);
    await settle();
    const pausedUntil = a.dispatcher.endpointState(hook)?.pausedUntil ?? 0;
    assert.ok(pausedUntil > clock.now(), 'A paused the endpoint');
    await eventually(() => b.dispatcher.endpointState(hook)?.pausedUntil === pausedUntil, 'B paused too');
    assert.equal(b.dispatcher.submit(report), 'paused', 'B drops instead of sending to the paused endpoint');
    assert.equal(b.transport.sent, 0);
    a.link.settingsChanged('ws1');
    await eventually(() => b.settings.length === 1, 'settings change announced');
    assert.deepEqual([a.settings, b.settings], [[], ['ws1']], 'to the others, not to itself');
    await Promise.all([a.feed.close(), b.feed.close()]);
  });

  test('an endpoint resumed on one instance (an operator\'s resume) is resumed on the others at once', async () => {
    const prefix = `${redis.prefix()}feed:`;
    const clock = new FakeClock();
    const instance = async (id: string) => {
      const feed = new ChangeFeed({ publisher: redis.client(), subscriber: redis.client(), prefix, instanceId: id });
      const link = callbackLinkOf(feed);
      const transport = new FakeTransport();
      const dispatcher = new CallbackDispatcher({ transport, clock, ids: sequentialIds(), onPause: link.paused.bind(link), onResume: link.resumed.bind(link) });
      dispatcher.setRoute('ws1', { owner: 'ws1', url: hook, signer });
      await link.listen({ settings: () => undefined, pause: (url, until, failures) => dispatcher.pauseFromPeer(url, until, failures), resume: (url) => dispatcher.resumeFromPeer(url) });
      return { transport, dispatcher, feed };
    };
    const a = await instance('a');
    const b = await instance('b');
    assert.equal(a.dispatcher.submit(report), 'queued');
    await settle();
    a.transport.answerAll('non_200', 503);
    await settle();
    await eventually(() => (b.dispatcher.endpointState(hook)?.pausedUntil ?? 0) > clock.now(), 'B paused too');
    assert.equal(a.dispatcher.resume('ws1')?.pausedUntil, null);
    await eventually(() => b.dispatcher.endpointState(hook)?.pausedUntil === null, 'B resumed too');
    assert.equal(b.dispatcher.submit(report), 'queued', 'B sends again');
    await Promise.all([a.feed.close(), b.feed.close()]);
  });

  test('with N live instances each sends at most 1/N of the endpoint rate and burst', async () => {
    const clock = new FakeClock();
    const transport = new FakeTransport();
    const dispatcher = new CallbackDispatcher({ transport, clock, ids: sequentialIds(), ratePerSecond: 100, burst: 100, maxInFlight: 1000 });
    dispatcher.setRateShare(1 / 4);
    dispatcher.setRoute('ws1', { owner: 'ws1', url: hook, signer });
    for (let i = 0; i < 200; i++) dispatcher.submit(report);
    await settle();
    assert.equal(transport.sent, 25, 'a quarter of the burst at once');
    clock.advance(1000);
    await settle();
    assert.equal(transport.sent, 50, 'then a quarter of the rate');
  });
});
