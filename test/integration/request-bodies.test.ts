import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.js';

interface Answer {
  status: number;
  json: { code?: string; errors?: { path: string; message: string }[] } & Record<string, unknown>;
}

describe('request bodies: an empty body is no body; JSON bodies are not coerced', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' } });
  });
  after(() => t.close());

  const send = async (method: string, path: string, options: { body?: unknown; contentType?: string; query?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Answer> => {
    const r = await t.client.core.send(method, path, options);
    return { status: r.status, json: r.body.length > 0 ? (JSON.parse(r.body) as Answer['json']) : {} };
  };
  const jsonType = { 'content-type': 'application/json' };

  test('DELETE with Content-Type: application/json and no body deletes (as published clients send it)', async () => {
    const created = await send('POST', '/api/v4/syndication-target', { body: { platform: 'TikTok', target_protocol: 'rtmp', target_stream: 'sk-1' } });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const deleted = await send('DELETE', `/api/v4/syndication-target/${String(created.json.id)}`, { headers: jsonType });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.json));
    assert.equal(deleted.json.message, 'Deleted');
  });

  test('an admin DELETE with a JSON content type and Content-Length: 0 revokes', async () => {
    const key = await t.newKey(t.workspace.id);
    const r = await t.app.inject({
      method: 'DELETE',
      url: `/api/v4/admin/workspaces/${t.workspace.id}/keys/${key.id}`,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json; charset=utf-8', 'content-length': '0' },
    });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(typeof r.json().revoked_at, 'number');
  });

  test('GET with a JSON content type and an empty body answers', async () => {
    const r = await send('GET', '/api/v4/workspace', { headers: jsonType });
    assert.equal(r.status, 200);
    assert.equal(r.json.id, t.workspace.id);
  });

  test('POST with a JSON content type and an empty body is a missing body (validation), not malformed JSON', async () => {
    const r = await send('POST', '/api/v4/monitoring/vod-stats/search', { headers: jsonType });
    assert.equal(r.status, 400);
    assert.equal(r.json.code, 'validation_failed');
  });

  test('a body that is not JSON is still malformed_json', async () => {
    const r = await send('POST', '/api/v4/monitoring/vod-stats/search', { body: '{"asset_ids": [', contentType: 'application/json' });
    assert.equal(r.status, 400);
    assert.equal(r.json.code, 'malformed_json');
  });

  test('search asset_ids [1, 2] is 400 with the path of each number', async () => {
    const r = await send('POST', '/api/v4/monitoring/vod-stats/search', { body: { asset_ids: [1, 2] } });
    assert.equal(r.status, 400);
    assert.equal(r.json.code, 'validation_failed');
    assert.equal(r.json.errors?.[0]?.path, '/asset_ids/0');
  });

  for (const [name, config, path] of [
    ['port "2088"', { host: 'zixi.example.net', port: '2088', password: 'p', stream_id: 's' }, '/platform_config/port'],
    ['integrated "true"', { integrated: 'true' }, '/platform_config/integrated'],
  ] as const) {
    test(`a target with platform_config ${name} is 400 at ${path}`, async () => {
      const platform = name.startsWith('port') ? { platform: 'Pluto TV', target_protocol: 'zixi' } : { platform: 'YouTube', target_protocol: 'rtmp', target_stream: 'sk-1' };
      const r = await send('POST', '/api/v4/syndication-target', { body: { ...platform, platform_config: config } });
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.equal(r.json.code, 'validation_failed');
      assert.deepEqual(r.json.errors?.map((e) => e.path), [path]);
    });
  }

  test('query strings keep the coercion the spec needs: top=5 is the integer 5, top=five is 400', async () => {
    const ok = await send('GET', '/api/v4/monitoring/vod-stats', { query: { top: '5' } });
    assert.equal(ok.status, 200);
    const bad = await send('GET', '/api/v4/monitoring/vod-stats', { query: { top: 'five' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.errors?.[0]?.path, '/querystring/top');
  });
});
