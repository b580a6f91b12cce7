import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { registerAuth } from '../../src/platform/http/auth-hook.js';
import { recordRoutes, routesOf } from '../../src/platform/http/route-table.js';
import type { App } from '../../src/platform/http/types.js';
import { createTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.js';
import { routeSecurityProblems, type OtherWorkspaceCases } from '../helpers/route-security.js';
import { eventually } from '../helpers/eventually.js';
import { startLocalReceiver, type LocalReceiver } from '../../src/platform/outbound/testing/local-receiver.js';

/**
 * Every registered route, from the route table: declared auth policy, 401 unsigned or with a
 * wrong key, 403 for an ingest key where only API keys may call, 401 for admin routes without
 * the token, and 404 (403 for a workspace path) for what another workspace owns.
 */
describe('route security, for every route of the app', () => {
  let t: TestApp;
  let receiver: LocalReceiver;
  let n = 0;
  const unique = (prefix: string) => `${prefix}-${++n}`;
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' } });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  /** What workspace B owns, made through B's own signed client. */
  const cases = (): OtherWorkspaceCases => {
    const b = t.other.client;
    const slicer = async () => (await b.managedSlicers.create({ name: unique('slicer'), region: 'us-west-2', ingest_protocol: 'srt', output_profile: 'hd-720p' }));
    const target = async () => (await b.syndication.createTarget({ platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_b_secret', description: unique('target') })).id;
    const schedule = async () => (await b.syndication.createSchedule({ syndication_target_id: await target(), content_id: unique('event'), content_type: 'e', region: 'us-west-2' })).id;
    const appKey = async () => (await b.playback.createAppKey(unique('b-key'))).name;
    const adConfig = async () => (await b.playback.putAdConfig(unique('b-ads'), { ad_server_url: 'https://ads.b.example/vast' })).name;
    const drmPolicy = async () => (await b.playback.putDrmPolicy(unique('b-drm'), { provider: 'widevine', settings: { security_level: 1 } })).name;
    const privateAsset = async () => (await b.playback.putPrivateAsset(unique('b-asset'), ['partner-of-b'])).asset_id;
    const statsAsset = async () => {
      const asset = unique('b-stats');
      await b.vodStats.ingest([{ type: 'start', owner: t.other.workspace.id, asset_id: asset, session_id: 's1' }]);
      return asset;
    };
    const slicerCases = {
      'GET /api/v4/managed-slicer/slicers/tasks/:id': { params: async () => ({ id: (await slicer()).task.id }) },
      'GET /api/v4/managed-slicer/slicers/restart/:id': { params: async () => ({ id: (await slicer()).id }) },
      'POST /api/v4/managed-slicer/slicers/:id/rotate-stream-key': { params: async () => ({ id: (await slicer()).id }) },
      'GET /api/v4/managed-slicer/slicers/:id': { params: async () => ({ id: (await slicer()).id }) },
      'PATCH /api/v4/managed-slicer/slicers/:id': { params: async () => ({ id: (await slicer()).id }), body: { output_profile: 'hd-1080p' } },
      'DELETE /api/v4/managed-slicer/slicers/:id': { params: async () => ({ id: (await slicer()).id }) },
    };
    const syndicationCases = {
      'GET /api/v4/syndication-target/:id': { params: async () => ({ id: await target() }) },
      'PATCH /api/v4/syndication-target/:id': { params: async () => ({ id: await target() }), body: { platform: 'Twitch', target_protocol: 'rtmp', description: 'taken over' } },
      'DELETE /api/v4/syndication-target/:id': { params: async () => ({ id: await target() }) },
      'PATCH /api/v4/syndication-target-test/:id': { params: async () => ({ id: await target() }), body: { test: 'rtmp-connection' } },
      'GET /api/v4/syndication-schedule/:id': { params: async () => ({ id: await schedule() }) },
      'PATCH /api/v4/syndication-schedule/:id': { params: async () => ({ id: await schedule() }), body: { content_id: 'taken-over' } },
      'DELETE /api/v4/syndication-schedule/:id': { params: async () => ({ id: await schedule() }) },
      'PATCH /api/v4/syndication-schedule-action/:id': { params: async () => ({ id: await schedule() }), body: { mode: 'start' } },
      'GET /api/v4/syndication-clipping-profiles/:id': {
        params: async () => ({ id: (await b.syndication.createClippingProfile({ description: unique('profile'), integrations: [{ service: 'YouTube', account: 'b-channel' }] })).id }),
      },
    };
    // Names are per workspace: A's PUT under B's name makes or replaces A's own, never B's.
    const unchangedFor = <T>(read: (name: string) => Promise<T>) => {
      const before = new Map<string, string>();
      return {
        remember: async (name: string) => void before.set(name, JSON.stringify(await read(name))),
        unchanged: async (params: Record<string, string>) => {
          const name = Object.values(params)[0] as string;
          const now = JSON.stringify(await read(name));
          return now === before.get(name) ? undefined : `${before.get(name)} became ${now}`;
        },
      };
    };
    const ads = unchangedFor((name) => b.playback.getAdConfig(name));
    const drm = unchangedFor((name) => b.playback.getDrmPolicy(name));
    const privateAssets = unchangedFor((name) => b.playback.getPrivateAsset(name));
    const playbackCases = {
      'GET /api/v4/playback/app-keys/:name': { params: async () => ({ name: await appKey() }) },
      'POST /api/v4/playback/app-keys/:name/versions': { params: async () => ({ name: await appKey() }) },
      'DELETE /api/v4/playback/app-keys/:name/versions/:version': { params: async () => ({ name: await appKey(), version: '1' }) },
      'DELETE /api/v4/playback/app-keys/:name': { params: async () => ({ name: await appKey() }) },
      'GET /api/v4/playback/ad-configs/:name': { params: async () => ({ name: await adConfig() }) },
      'DELETE /api/v4/playback/ad-configs/:name': { params: async () => ({ name: await adConfig() }) },
      'PUT /api/v4/playback/ad-configs/:name': {
        params: async () => {
          const name = await adConfig();
          await ads.remember(name);
          return { name };
        },
        body: { ad_server_url: 'https://ads.a.example/vast', slots_s: [30] },
        unchanged: ads.unchanged,
      },
      'GET /api/v4/playback/drm-policies/:name': { params: async () => ({ name: await drmPolicy() }) },
      'DELETE /api/v4/playback/drm-policies/:name': { params: async () => ({ name: await drmPolicy() }) },
      'PUT /api/v4/playback/drm-policies/:name': {
        params: async () => {
          const name = await drmPolicy();
          await drm.remember(name);
          return { name };
        },
        body: { provider: 'playready', settings: {} },
        unchanged: drm.unchanged,
      },
      'GET /api/v4/playback/private-assets/:asset_id': { params: async () => ({ asset_id: await privateAsset() }) },
      'DELETE /api/v4/playback/private-assets/:asset_id': { params: async () => ({ asset_id: await privateAsset() }) },
      'PUT /api/v4/playback/private-assets/:asset_id': {
        params: async () => {
          const assetId = await privateAsset();
          await privateAssets.remember(assetId);
          return { asset_id: assetId };
        },
        body: { shared_with: [] },
        unchanged: privateAssets.unchanged,
      },
    };
    // B shares its content with a workspace of its own choosing: A neither sees nor removes that share.
    const sharedBy = async () => {
      const grantee = await t.runtime.workspaces.createWorkspace(unique('partner-of-b'));
      await b.workspace.share(grantee.id);
      return { grantee_id: grantee.id };
    };
    let bSharesBefore = '';
    const shareCases = {
      'GET /api/v4/workspace/shares/:grantee_id': { params: sharedBy },
      'DELETE /api/v4/workspace/shares/:grantee_id': { params: sharedBy },
      // A's PUT naming the same grantee makes A's own share, never changes B's.
      'PUT /api/v4/workspace/shares/:grantee_id': {
        params: async () => {
          const params = await sharedBy();
          bSharesBefore = JSON.stringify(await b.workspace.shares());
          return params;
        },
        unchanged: async () => {
          const now = JSON.stringify(await b.workspace.shares());
          return now === bSharesBefore ? undefined : `${bSharesBefore} became ${now}`;
        },
      },
    };
    // Without ffmpeg the asset library answers 503 media_tools_missing to every signed call.
    const mediaTools = t.runtime.assets.tools()?.available === true;
    const asset = async () => (mediaTools ? (await b.assets.upload(Readable.from([Buffer.from('not media, but an upload')]))).id : 'f'.repeat(32));
    const assetStatus = mediaTools ? {} : { status: 503 as const };
    // A delivery attempt in B's log: B's callback gets one of B's error reports.
    const deliveryAttempt = async () => {
      await b.errorReporting.putSettings({ callback_url: receiver.url });
      const before = (await b.errorReporting.listAttempts()).total_items;
      t.runtime.errorReports.submit({ owner: t.other.workspace.id, url: 'https://edge.example.com/b.m3u8', ip: '203.0.113.2', code: 403, ua: 'P', msg: 'm', timestamp: 1_763_719_200, errorCode: 104 });
      await eventually(async () => (await b.errorReporting.listAttempts()).total_items > before, 'B\'s attempt logged');
      return { attempt_id: (await b.errorReporting.listAttempts()).items[0]?.id ?? '' };
    };
    const errorReportingCases = {
      'GET /api/v4/error-reporting/attempts/:attempt_id': { params: deliveryAttempt },
      'POST /api/v4/error-reporting/attempts/:attempt_id/resend': { params: deliveryAttempt },
    };
    // B's webhook subscription, and an attempt in B's event log (B's endpoint gets one of B's events).
    const subscription = async () => (await b.webhooks.createSubscription({ url: receiver.url, event_types: ['asset.ready'] })).id;
    const webhookAttempt = async () => {
      const id = await subscription();
      await t.runtime.webhooks.events.publish(t.other.workspace.id, 'asset.ready', { asset_id: unique('b-asset') });
      await eventually(async () => (await b.webhooks.listAttempts({ subscription_id: id })).total_items > 0, 'B\'s webhook attempt logged');
      return { attempt_id: (await b.webhooks.listAttempts({ subscription_id: id })).items[0]?.id ?? '' };
    };
    const webhookCases = {
      'GET /api/v4/webhooks/subscriptions/:subscription_id': { params: async () => ({ subscription_id: await subscription() }) },
      'PATCH /api/v4/webhooks/subscriptions/:subscription_id': { params: async () => ({ subscription_id: await subscription() }), body: { url: receiver.url.replace('/hook', '/taken') } },
      'DELETE /api/v4/webhooks/subscriptions/:subscription_id': { params: async () => ({ subscription_id: await subscription() }) },
      'POST /api/v4/webhooks/subscriptions/:subscription_id/rotate-secret': { params: async () => ({ subscription_id: await subscription() }) },
      'GET /api/v4/webhooks/attempts/:attempt_id': { params: webhookAttempt },
      'POST /api/v4/webhooks/attempts/:attempt_id/resend': { params: webhookAttempt },
    };
    const assetCases = {
      'GET /api/v4/assets/:id': { params: async () => ({ id: await asset() }), ...assetStatus },
      'PATCH /api/v4/assets/:id': { params: async () => ({ id: await asset() }), body: { title: 'taken over' }, ...assetStatus },
      'DELETE /api/v4/assets/:id': { params: async () => ({ id: await asset() }), ...assetStatus },
      'GET /api/v4/assets/:id/poster.jpg': { params: async () => ({ id: await asset() }), ...assetStatus },
    };
    return {
      'GET /api/v4/workspaces/:workspace_id': { params: async () => ({ workspace_id: t.other.workspace.id }), status: 403 },
      'GET /api/v4/workspace/keys/:key_id': { params: async () => ({ key_id: t.other.key.id }) },
      'DELETE /api/v4/workspace/keys/:key_id': { params: async () => ({ key_id: (await t.newKey(t.other.workspace.id)).id }) },
      'GET /api/v4/monitoring/vod-stats/owner-summary/:workspace_id': { params: async () => ({ workspace_id: t.other.workspace.id }), status: 403 },
      'GET /api/v4/monitoring/vod-stats/:asset_id': { params: async () => ({ asset_id: await statsAsset() }) },
      ...slicerCases,
      ...syndicationCases,
      ...playbackCases,
      ...shareCases,
      ...assetCases,
      ...errorReportingCases,
      ...webhookCases,
    };
  };

  test('every route declares its policy, refuses what it must, and answers 404 for what another workspace owns', async () => {
    const ingestKey = await t.newKey(t.workspace.id, 'ingest');
    const routes = routesOf(t.app);
    assert.ok(routes.filter((r) => r.url.startsWith('/api/v4/')).length > 60, `${routes.length} routes recorded`);
    const problems = await routeSecurityProblems({
      app: t.app,
      owner: t.workspace.id,
      apiKey: t.key.secret,
      ingestKey: ingestKey.secret,
      adminToken: TEST_ADMIN_TOKEN,
      now: () => t.clock.now(),
      cases: cases(),
    });
    assert.deepEqual(problems, []);
  });
});

/** The suite must complain about a route without auth metadata, a missing case and a leak: seen on an app made to have them. */
describe('the route security suite itself', () => {
  let t: TestApp;
  let app: App;
  before(async () => {
    t = await createTestApp();
    app = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>();
    recordRoutes(app);
    registerAuth(app, t.runtime.authenticator, TEST_ADMIN_TOKEN);
    app.get('/api/v4/declared', { config: { auth: 'api' } }, async () => ({ ok: true }));
    app.get('/api/v4/undeclared', async () => ({ ok: true }));
    // Answers whatever id it is given, whoever owns it.
    app.get('/api/v4/leaky/:id', { config: { auth: 'api' } }, async (request) => ({ id: (request.params as { id: string }).id }));
    app.get('/api/v4/uncovered/:id', { config: { auth: 'api' } }, async () => ({ ok: true }));
    await app.ready();
  });
  after(async () => {
    await app.close();
    await t.close();
  });

  test('a route added without auth metadata, an id route without a case and one that serves another workspace are reported', async () => {
    const ingestKey = await t.newKey(t.workspace.id, 'ingest');
    const problems = await routeSecurityProblems({
      app,
      owner: t.workspace.id,
      apiKey: t.key.secret,
      ingestKey: ingestKey.secret,
      adminToken: TEST_ADMIN_TOKEN,
      now: () => t.clock.now(),
      cases: { 'GET /api/v4/leaky/:id': { params: async () => ({ id: 'owned-by-b' }) } },
    });
    assert.deepEqual(problems, [
      "GET /api/v4/undeclared: declares no auth policy (set config.auth to 'api', 'ingest', 'admin' or 'none')",
      'HEAD /api/v4/undeclared: declares no auth policy (set config.auth to \'api\', \'ingest\', \'admin\' or \'none\')',
      "GET /api/v4/leaky/:id: another workspace's resource: answered 200, expected 404",
      'GET /api/v4/uncovered/:id: has path parameters but no other-workspace case (add one to the route security suite)',
    ]);
  });
});
