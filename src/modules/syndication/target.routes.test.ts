import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { PlaylineApiError } from '../../client/index.js';
import { createSyndicationTestApp, type SyndicationTestApp } from './syndication.test-support.js';
import type { SyndicationTables } from './syndication.tables.js';

const STREAM_KEY = 'sk-CLEARTEXT-stream-4f1d';
const PASSWORD = 'pw-CLEARTEXT-zixi-77aa';
const NEW_PASSWORD = 'pw-CLEARTEXT-rotated-91bc';
const STREAM_ID = 'sid-CLEARTEXT-zixi-5e02';
const secrets = [STREAM_KEY, PASSWORD, NEW_PASSWORD, STREAM_ID];

describe('publishing target routes', () => {
  let s: SyndicationTestApp;
  const bodies: string[] = [];
  const send = async (method: string, path: string, body?: unknown) => {
    const response = await s.client.core.send(method, `/api/v4${path}`, body === undefined ? {} : { body });
    bodies.push(response.body);
    return { status: response.status, json: JSON.parse(response.body) as Record<string, unknown> & { errors?: { path: string }[] } };
  };
  before(async () => {
    s = await createSyndicationTestApp();
  });
  after(() => s.close());

  test('create, PATCH and read keep every secret out of the row, the responses and the logs', async () => {
    const rtmp = await send('POST', '/syndication-target', {
      description: 'main',
      platform: 'Custom',
      target_protocol: 'rtmp',
      target_stream: `rtmp://ingest.example.com/live/${STREAM_KEY}`,
    });
    assert.equal(rtmp.status, 201);
    assert.equal(rtmp.json.target_stream, '********');
    assert.equal(rtmp.json['@type'], 'SyndicationTarget');
    assert.equal(rtmp.json['@id'], `/api/v4/syndication-target/${String(rtmp.json.id)}`);
    assert.equal(rtmp.json.status, 'stopped');

    const zixi = await send('POST', '/syndication-target', {
      platform: 'Pluto TV',
      target_protocol: 'zixi',
      platform_config: { host: 'zixi.example.net', port: 2088, password: PASSWORD, stream_id: STREAM_ID },
    });
    assert.equal(zixi.status, 201);
    assert.deepEqual(zixi.json.platform_config, { host: 'zixi.example.net', password: '********', port: 2088, remote_id: '', stream_id: '********', type: 'push' });

    // Changing only the password keeps host, port and stream_id.
    const patched = await send('PATCH', `/syndication-target/${String(zixi.json.id)}`, {
      platform: 'Pluto TV',
      target_protocol: 'zixi',
      platform_config: { password: NEW_PASSWORD },
    });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.json.platform_config, zixi.json.platform_config);
    const opened = await s.module.targets.openForPublishing(s.t.workspace.id, String(zixi.json.id));
    assert.deepEqual(opened.target.platform_config, { host: 'zixi.example.net', port: 2088, password: NEW_PASSWORD, stream_id: STREAM_ID });

    const refused = await send('POST', '/syndication-target', {
      platform: 'Custom',
      target_protocol: 'rtmp',
      target_stream: `rtmp://ingest.example.com:99999/${STREAM_KEY}`,
      platform_config: { password: PASSWORD },
    });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.json.errors?.map((e) => e.path).sort(), ['/platform_config/password', '/target_stream']);

    await send('GET', '/syndication-target');
    await send('GET', `/syndication-target/${String(rtmp.json.id)}`);

    const db = s.t.runtime.storage.db.withTables<SyndicationTables>();
    const rows = await db.selectFrom('syndication_targets').selectAll().execute();
    assert.equal(rows.length, 2);
    const raw = JSON.stringify(rows);
    const seen = `${raw}\n${bodies.join('\n')}\n${s.logs.join('')}`;
    assert.ok(s.logs.length > 0, 'the app logged');
    for (const secret of secrets) assert.ok(!seen.includes(secret), `${secret} appears in a row, response or log line`);
  });

  test('PATCH switches platforms with a spec-shaped body; stored fields of the old kind are dropped (13.6)', async () => {
    // The published client's request: PATCH, JSON body, Content-Type application/json, msg and sig in the query.
    const created = await send('POST', '/syndication-target', {
      description: 'switching',
      platform: 'Custom',
      target_protocol: 'rtmp',
      target_stream: 'rtmp://live.example.com/app/old-key',
    });
    assert.equal(created.status, 201);
    const id = String(created.json.id);
    const toPluto = await send('PATCH', `/syndication-target/${id}`, {
      platform: 'Pluto TV',
      target_protocol: 'zixi',
      platform_config: { host: 'zixi.example.net', port: 2088, password: PASSWORD, stream_id: STREAM_ID },
    });
    assert.equal(toPluto.status, 200, JSON.stringify(toPluto.json));
    const pluto = await send('GET', `/syndication-target/${id}`);
    const { platform_config: plutoConfig, target_stream: plutoStream, ...plutoRest } = pluto.json;
    assert.deepEqual(plutoRest, { '@id': `/api/v4/syndication-target/${id}`, '@type': 'SyndicationTarget', id, description: 'switching', platform: 'Pluto TV', target_protocol: 'zixi', status: 'stopped' });
    assert.equal(plutoStream, '', 'Pluto TV uses no target_stream');
    assert.deepEqual(plutoConfig, { host: 'zixi.example.net', password: '********', port: 2088, remote_id: '', stream_id: '********', type: 'push' });
    assert.deepEqual(toPluto.json, pluto.json);

    const toTikTok = await send('PATCH', `/syndication-target/${id}`, { platform: 'TikTok', target_protocol: 'rtmp', target_stream: STREAM_KEY });
    assert.equal(toTikTok.status, 200, JSON.stringify(toTikTok.json));
    const tiktok = await send('GET', `/syndication-target/${id}`);
    assert.deepEqual(tiktok.json, { ...plutoRest, platform: 'TikTok', target_protocol: 'rtmp', target_stream: '********', platform_config: { remote_id: '', type: 'push' } });
    assert.deepEqual(toTikTok.json, tiktok.json);
    const opened = await s.module.targets.openForPublishing(s.t.workspace.id, id);
    assert.deepEqual(opened.target, { description: 'switching', platform: 'TikTok', target_protocol: 'rtmp', target_stream: STREAM_KEY, platform_config: {} });

    // The body on a TikTok target: nothing stored belongs to Pluto TV, so all five come back.
    const broken = await send('PATCH', `/syndication-target/${id}`, { platform: 'Pluto TV', target_protocol: 'rtmp', platform_config: { host: 'h', re_schedule: true } });
    assert.equal(broken.status, 400);
    assert.deepEqual(broken.json.errors?.map((e) => e.path).sort(), [
      '/platform_config/password', '/platform_config/port', '/platform_config/re_schedule', '/platform_config/stream_id', '/target_protocol',
    ]);
  });

  test('PATCH without platform and target_protocol reports both, with the other violations', async () => {
    const created = await s.api.createTarget({ platform: 'TikTok', target_protocol: 'rtmp', target_stream: 'k1' });
    const result = await send('PATCH', `/syndication-target/${created.id}`, { platform_config: { integrated: true, port: 0 } });
    assert.equal(result.status, 400);
    assert.deepEqual(result.json.errors?.map((e) => e.path).sort(), ['/platform', '/platform_config/integrated', '/platform_config/port', '/target_protocol']);
  });

  test('Custom RTMP stream URLs with one path segment are accepted, as the spec allows (13.8)', async () => {
    const created = await send('POST', '/syndication-target', { platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://live.example.com/streamkey' });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const patched = await send('PATCH', `/syndication-target/${String(created.json.id)}`, {
      platform: 'Custom',
      target_protocol: 'rtmp',
      target_stream: 'rtmp://a.rtmp.youtube.com/live2',
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.json));
    const opened = await s.module.targets.openForPublishing(s.t.workspace.id, String(created.json.id));
    assert.equal(opened.target.target_stream, 'rtmp://a.rtmp.youtube.com/live2');
    const rtmps = await send('PATCH', `/syndication-target/${String(created.json.id)}`, {
      platform: 'Custom',
      target_protocol: 'rtmps',
      target_stream: 'rtmps://live.example.com:443/streamkey',
    });
    assert.equal(rtmps.status, 200, JSON.stringify(rtmps.json));
    const bare = await send('PATCH', `/syndication-target/${String(created.json.id)}`, { platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://live.example.com' });
    assert.equal(bare.status, 400);
    assert.deepEqual(bare.json.errors?.map((e) => e.path), ['/target_stream']);
  });

  test('a platform\'s requirements apply whatever protocol was sent: every violation at once (13.7)', async () => {
    const body = { platform: 'Pluto TV', target_protocol: 'rtmp', platform_config: { host: 'h', re_schedule: true } };
    const expected = ['/platform_config/password', '/platform_config/port', '/platform_config/re_schedule', '/platform_config/stream_id', '/target_protocol'];
    const created = await send('POST', '/syndication-target', body);
    assert.equal(created.status, 400);
    assert.deepEqual(created.json.errors?.map((e) => e.path).sort(), expected);
  });

  test('three violations in one body come back at once', async () => {
    const result = await send('POST', '/syndication-target', {
      platform: 'Custom',
      target_protocol: 'rist',
      target_stream: 'rist://rist.example.com:5001',
      platform_config: { type: 'pull', host: 'h.example' },
    });
    assert.equal(result.status, 400);
    assert.deepEqual(result.json.errors?.map((e) => e.path).sort(), ['/platform_config/host', '/platform_config/type', '/target_stream']);
  });

  test('integrated targets need a compatible clipping profile', async () => {
    const youtube = await s.api.createClippingProfile({ description: 'yt', integrations: [{ service: 'YouTube', account: 'channel' }] });
    const facebook = await s.api.createClippingProfile({ description: 'fb', integrations: [{ service: 'Facebook', account: 'page' }] });
    const wrong = await send('POST', '/syndication-target', {
      platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: true, page_id: '42', clipping_profile_id: youtube.id },
    });
    assert.deepEqual(wrong.json.errors?.map((e) => e.path), ['/platform_config/clipping_profile_id']);
    const right = await s.api.createTarget({
      platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: true, page_id: '42', clipping_profile_id: facebook.id },
    });
    assert.equal(right.platform_config.clipping_profile_id, facebook.id);
    assert.equal(right.target_stream, '', 'integrated: no stream key stored');
    const compatible = await s.api.listClippingProfiles('Facebook');
    assert.deepEqual(compatible.items.map((p) => p.id), [facebook.id]);
    assert.equal(compatible.total_items, 1);
  });

  test("another workspace's targets are 404 for every target route", async () => {
    const mine = await s.api.createTarget({ platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'k2' });
    const attempts: [string, () => Promise<unknown>][] = [
      ['get', () => s.otherApi.getTarget(mine.id)],
      ['patch', () => s.otherApi.updateTarget(mine.id, { platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'x' })],
      ['delete', () => s.otherApi.deleteTarget(mine.id)],
      ['test', () => s.otherApi.testTarget(mine.id)],
    ];
    for (const [name, attempt] of attempts) {
      await assert.rejects(attempt, (err: unknown) => err instanceof PlaylineApiError && err.status === 404 && err.code === 'not_found', name);
    }
    const theirs = await s.otherApi.listTargets();
    assert.equal(theirs.total_items, 0);
    assert.equal((await s.api.getTarget(mine.id)).target_stream, '********');
  });

  test('DELETE answers the Deleted shape, then the target is gone', async () => {
    const target = await s.api.createTarget({ platform: 'TikTok', target_protocol: 'rtmp', target_stream: 'k3' });
    assert.deepEqual(await s.api.deleteTarget(target.id), { '@id': `/api/v4/syndication-target/${target.id}`, '@type': 'SyndicationTarget', message: 'Deleted' });
    await assert.rejects(() => s.api.getTarget(target.id), (err: unknown) => err instanceof PlaylineApiError && err.status === 404);
  });

  test('every syndication route is in the OpenAPI document', async () => {
    const response = await s.app.inject({ method: 'GET', url: '/api/v4/openapi.json' });
    const doc = response.json() as { paths: Record<string, Record<string, unknown>> };
    const expected: [string, string][] = [
      ['post', '/api/v4/syndication-target'], ['get', '/api/v4/syndication-target'],
      ['get', '/api/v4/syndication-target/{id}'], ['patch', '/api/v4/syndication-target/{id}'], ['delete', '/api/v4/syndication-target/{id}'],
      ['patch', '/api/v4/syndication-target-test/{id}'],
      ['post', '/api/v4/syndication-schedule'], ['get', '/api/v4/syndication-schedule'],
      ['get', '/api/v4/syndication-schedule/{id}'], ['patch', '/api/v4/syndication-schedule/{id}'], ['delete', '/api/v4/syndication-schedule/{id}'],
      ['patch', '/api/v4/syndication-schedule-action/{id}'],
      ['get', '/api/v4/syndication-regions'],
      ['post', '/api/v4/syndication-clipping-profiles'], ['get', '/api/v4/syndication-clipping-profiles'], ['get', '/api/v4/syndication-clipping-profiles/{id}'],
    ];
    for (const [method, path] of expected) assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path} missing from the OpenAPI document`);
    const patch = doc.paths['/api/v4/syndication-target/{id}']?.patch as { description?: string; responses: Record<string, { content: Record<string, { schema: { required?: string[] } }> }> };
    assert.match(patch.description ?? '', /Another kind: .* dropped, not reported/);
    const shown = patch.responses['200']?.content['application/json']?.schema.required ?? [];
    for (const field of ['@id', '@type', 'id', 'description', 'platform', 'target_protocol', 'target_stream', 'status', 'platform_config']) {
      assert.ok(shown.includes(field), `${field} is not a required member of the documented response`);
    }
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 2000));
  });
});
