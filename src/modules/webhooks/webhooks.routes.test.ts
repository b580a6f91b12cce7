import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../../../test/helpers/test-app.js';
import type { TestApp } from '../../../test/helpers/test-app.js';
import { PlaylineApiError } from '../../client/index.js';
import { operationalEventTypes } from '../../platform/operational-events.js';

const opts = { timeout: 20_000 };
// Receivers would be on 127.0.0.1: the allow-list admits loopback as in local development.
const allowLoopback = { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_WEBHOOK_MAX_SUBSCRIPTIONS: '3' };

const refused = async (call: Promise<unknown>): Promise<PlaylineApiError> => {
  try {
    await call;
  } catch (err) {
    if (err instanceof PlaylineApiError) return err;
    throw err;
  }
  assert.fail('the call was accepted');
};

describe('webhook subscriptions API', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: allowLoopback });
  });
  after(() => t.close());

  test('create shows the signing secret once; get, list, update and delete never show it', opts, async () => {
    const created = await t.client.webhooks.createSubscription({ url: 'http://127.0.0.1:9/hook', event_types: ['asset.ready', 'live.started'], description: 'ops' });
    assert.match(created.id, /^whs_[0-9a-f]{32}$/);
    assert.equal(created['@id'], `/api/v4/webhooks/subscriptions/${created.id}`);
    assert.equal(created['@type'], 'WebhookSubscription');
    assert.match(created.signing_secret, /^whsec_/);
    assert.deepEqual(created.event_types, ['asset.ready', 'live.started']);
    assert.equal(created.enabled, true);
    assert.equal(created.pending_deliveries, 0);

    const got = await t.client.webhooks.getSubscription(created.id);
    assert.equal('signing_secret' in got, false);
    assert.equal(JSON.stringify(got).includes(created.signing_secret), false);
    const list = await t.client.webhooks.listSubscriptions();
    assert.equal(list['@type'], 'Collection');
    assert.ok(list.items.some((s) => s.id === created.id));
    assert.equal(list.total_items, list.items.length);
    assert.equal(JSON.stringify(list).includes(created.signing_secret), false);

    const updated = await t.client.webhooks.updateSubscription(created.id, { event_types: ['recording.ready'], enabled: false, description: 'later' });
    assert.deepEqual(updated.event_types, ['recording.ready']);
    assert.equal(updated.enabled, false);
    assert.equal(updated.description, 'later');
    assert.equal(updated.url, 'http://127.0.0.1:9/hook');
    assert.equal(JSON.stringify(updated).includes(created.signing_secret), false);

    const rotated = await t.client.webhooks.rotateSecret(created.id);
    assert.match(rotated.signing_secret, /^whsec_/);
    assert.notEqual(rotated.signing_secret, created.signing_secret);
    assert.equal(rotated.previous_signing_secret_expires_at, t.clock.now() + 24 * 3_600_000);

    const deleted = await t.client.webhooks.deleteSubscription(created.id);
    assert.deepEqual(deleted, { '@id': `/api/v4/webhooks/subscriptions/${created.id}`, '@type': 'WebhookSubscription', message: 'Deleted' });
    assert.equal((await refused(t.client.webhooks.getSubscription(created.id))).status, 404);
  });

  test('every event type is accepted, recording.ready included; a bad body is 400 with its path', opts, async () => {
    const all = await t.client.webhooks.createSubscription({ url: 'http://127.0.0.1:9/all', event_types: [...operationalEventTypes] });
    assert.deepEqual(all.event_types, [...operationalEventTypes]);
    await t.client.webhooks.deleteSubscription(all.id);

    const cases: Array<[unknown, string]> = [
      [{ url: 'http://127.0.0.1:9/x', event_types: ['asset.deleted'] }, '/event_types/0'],
      [{ url: 'http://127.0.0.1:9/x', event_types: [] }, '/event_types'],
      [{ url: 'http://127.0.0.1:9/x', event_types: ['asset.ready', 'asset.ready'] }, '/event_types'],
      [{ event_types: ['asset.ready'] }, '/url'],
      [{ url: 'ftp://127.0.0.1/x', event_types: ['asset.ready'] }, '/url'],
      [{ url: 'not a url', event_types: ['asset.ready'] }, '/url'],
      [{ url: 'http://127.0.0.1:9/x', event_types: ['asset.ready'], description: 'd'.repeat(513) }, '/description'],
    ];
    for (const [body, path] of cases) {
      const error = await refused(t.client.core.request('POST', '/api/v4/webhooks/subscriptions', { body })).catch((err: unknown) => {
        throw new Error(`${JSON.stringify(body)}: ${(err as Error).message}`);
      });
      assert.equal(error.status, 400, JSON.stringify(body));
      const problem = error.body as { code: string; errors?: Array<{ path: string }> };
      assert.equal(problem.code, 'validation_failed');
      if (path) assert.ok(problem.errors?.some((e) => e.path.startsWith(path)), `${JSON.stringify(body)}: ${JSON.stringify(problem.errors)}`);
    }
  });

  test('a workspace holds at most PLAYLINE_WEBHOOK_MAX_SUBSCRIPTIONS: one more is 409 quota_exceeded', opts, async () => {
    const before = (await t.client.webhooks.listSubscriptions()).total_items;
    const made: string[] = [];
    for (let i = before; i < 3; i++) made.push((await t.client.webhooks.createSubscription({ url: `http://127.0.0.1:9/cap${i}`, event_types: ['asset.ready'] })).id);
    const error = await refused(t.client.webhooks.createSubscription({ url: 'http://127.0.0.1:9/one-more', event_types: ['asset.ready'] }));
    assert.equal(error.status, 409);
    assert.deepEqual({ ...(error.body as object), request_id: undefined, detail: undefined, type: undefined, title: undefined }, {
      ...(error.body as object), request_id: undefined, detail: undefined, type: undefined, title: undefined, code: 'quota_exceeded', quota: 'webhook_subscriptions', limit: 3, used: 3,
    });
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /playline_quota_refusals_total\{quota="webhook_subscriptions"\} 1/);
    // Another workspace has a cap of its own.
    const theirs = await t.other.client.webhooks.createSubscription({ url: 'http://127.0.0.1:9/other', event_types: ['asset.ready'] });
    await t.other.client.webhooks.deleteSubscription(theirs.id);
    for (const id of made) await t.client.webhooks.deleteSubscription(id);
  });

  test('unsigned calls are 401; another workspace\'s subscription and attempts are 404 and never listed', opts, async () => {
    for (const [method, url] of [['GET', '/api/v4/webhooks/subscriptions'], ['POST', '/api/v4/webhooks/subscriptions'], ['GET', '/api/v4/webhooks/attempts']] as const) {
      const unsigned = await t.app.inject({ method, url, ...(method === 'POST' ? { payload: { url: 'http://127.0.0.1:9/x', event_types: ['asset.ready'] } } : {}) });
      assert.equal(unsigned.statusCode, 401, `${method} ${url}`);
    }
    const theirs = await t.other.client.webhooks.createSubscription({ url: 'http://127.0.0.1:9/theirs', event_types: ['asset.ready'] });
    const mine = t.client.webhooks;
    for (const call of [
      () => mine.getSubscription(theirs.id),
      () => mine.updateSubscription(theirs.id, { url: 'http://127.0.0.1:9/mine' }),
      () => mine.rotateSecret(theirs.id),
      () => mine.deleteSubscription(theirs.id),
      () => mine.listAttempts({ subscription_id: theirs.id }),
    ]) {
      const error = await refused(call());
      assert.equal(error.status, 404);
      assert.equal((error.body as { code: string }).code, 'not_found');
    }
    assert.equal((await mine.listSubscriptions()).items.some((s) => s.id === theirs.id), false);
    // Untouched by those calls.
    const still = await t.other.client.webhooks.getSubscription(theirs.id);
    assert.equal(still.url, 'http://127.0.0.1:9/theirs');
    assert.equal(still.previous_signing_secret_expires_at, null);
    await t.other.client.webhooks.deleteSubscription(theirs.id);
  });
});

describe('the OpenAPI document describes the subscriptions API and every event a subscribed endpoint receives', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  test('paths under /api/v4/webhooks, and one webhooks entry per event type with its body schema and signature headers', opts, async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v4/openapi.json' })).json<{
      paths: Record<string, Record<string, unknown>>;
      webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: { properties: { type: { const: string }; data: { properties: Record<string, unknown> } } } } } }; parameters: Array<{ name: string }> } }>;
    }>();
    assert.deepEqual(Object.keys(doc.paths).filter((p) => p.startsWith('/api/v4/webhooks')).sort(), [
      '/api/v4/webhooks/attempts', '/api/v4/webhooks/attempts/{attempt_id}', '/api/v4/webhooks/attempts/{attempt_id}/resend',
      '/api/v4/webhooks/subscriptions', '/api/v4/webhooks/subscriptions/{subscription_id}', '/api/v4/webhooks/subscriptions/{subscription_id}/rotate-secret',
    ]);
    assert.deepEqual(Object.keys(doc.webhooks), [...operationalEventTypes]);
    for (const type of operationalEventTypes) {
      const post = doc.webhooks[type]?.post;
      assert.equal(post?.requestBody.content['application/json'].schema.properties.type.const, type);
      assert.ok('owner' in (post?.requestBody.content['application/json'].schema.properties.data.properties ?? {}), type);
      assert.deepEqual(post?.parameters.map((p) => p.name), ['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    }
    assert.ok('slicer_id' in (doc.webhooks['recording.ready']?.post.requestBody.content['application/json'].schema.properties.data.properties ?? {}));
  });
});

describe('webhook subscription URLs go through the outbound guard', () => {
  let t: TestApp;
  before(async () => {
    // No allow-list: as deployed.
    t = await createTestApp();
  });
  after(() => t.close());

  test('loopback, private, link-local and metadata addresses are refused (422 callback_url_refused), on create and update', opts, async () => {
    const targets = [
      'http://127.0.0.1:8080/hook',
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://[::1]/hook',
      'http://10.0.0.5/hook',
      'http://192.168.1.1/hook',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://0.0.0.0:6379/',
    ];
    for (const url of targets) {
      const error = await refused(t.client.webhooks.createSubscription({ url, event_types: ['asset.ready'] }));
      assert.equal(error.status, 422, url);
      assert.equal((error.body as { code: string }).code, 'callback_url_refused', url);
    }
    assert.equal((await t.client.webhooks.listSubscriptions()).total_items, 0);

    const publicOne = await t.client.webhooks.createSubscription({ url: 'https://93.184.215.14/hook', event_types: ['asset.ready'] });
    const error = await refused(t.client.webhooks.updateSubscription(publicOne.id, { url: 'http://169.254.169.254/latest/meta-data/' }));
    assert.equal(error.status, 422);
    assert.equal((await t.client.webhooks.getSubscription(publicOne.id)).url, 'https://93.184.215.14/hook');
  });
});
