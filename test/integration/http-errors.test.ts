import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { signV4 } from '../../src/platform/auth/v4-signature.js';
import { MAX_ID_LENGTH } from '../../src/platform/limits.js';
import { createTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.js';

describe('error answers are problem+json from one catalogue', () => {
  let t: TestApp;
  const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const expectProblem = (response: { statusCode: number; headers: Record<string, unknown>; json(): unknown }, status: number, code: string) => {
    assert.equal(response.statusCode, status);
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
    const body = response.json() as Record<string, unknown>;
    assert.equal(body.code, code);
    assert.equal(body.status, status);
    assert.equal(body.type, `urn:playline:problem:${code}`);
    assert.equal(typeof body.title, 'string');
    assert.equal(typeof body.detail, 'string');
    assert.equal(body.request_id, response.headers['x-request-id']);
    return body;
  };

  test('unknown route: 404 route_not_found', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/api/v4/no-such-thing' }), 404, 'route_not_found');
  });

  test('wrong content type: 415', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/api/v4/admin/workspaces', headers: { ...admin, 'content-type': 'text/plain' }, payload: 'name=x' });
    expectProblem(r, 415, 'unsupported_media_type');
  });

  test('too-large body: 413', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/api/v4/admin/workspaces', headers: { ...admin, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }) });
    expectProblem(r, 413, 'payload_too_large');
  });

  test('malformed JSON: 400 malformed_json', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/api/v4/admin/workspaces', headers: { ...admin, 'content-type': 'application/json' }, payload: '{"name": ' });
    expectProblem(r, 400, 'malformed_json');
  });

  test('schema violations: 400 validation_failed with JSON paths', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/api/v4/admin/workspaces', headers: admin, payload: { name: '', extra: 1 } });
    const body = expectProblem(r, 400, 'validation_failed');
    const paths = (body.errors as { path: string }[]).map((e) => e.path);
    assert.ok(paths.includes('/name') || paths.includes('/extra'), JSON.stringify(body.errors));
  });

  test('a request id sent by the client is echoed; otherwise one is made', async () => {
    const given = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } });
    assert.equal(given.headers['x-request-id'], 'abc-123');
    const made = await t.app.inject({ method: 'GET', url: '/healthz' });
    assert.match(String(made.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  test('duplicate and trailing slashes are tolerated', async () => {
    const r = await t.client.core.send('GET', '/api/v4//workspace/');
    assert.equal(r.status, 200);
  });

  test('health, readiness and metrics answer without credentials', async () => {
    assert.equal((await t.app.inject({ url: '/healthz' })).statusCode, 200);
    const ready = await t.app.inject({ url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.equal(ready.json().storage, 'sqlite');
    await t.client.workspace.get();
    const metrics = await t.app.inject({ url: '/metrics' });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.body, /playline_http_requests_total\{method="GET",route="\/api\/v4\/workspace",status="200"\} \d+/);
    assert.match(metrics.body, /playline_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/v4\/workspace"\}/);
  });

  const signedQuery = () => {
    const { msg, sig } = signV4(t.workspace.id, t.key.secret, Math.floor(t.clock.now() / 1000));
    return { query: `msg=${encodeURIComponent(msg)}&sig=${sig}`, msg, sig };
  };

  test('a badly encoded path is 400 bad_url as problem+json, never echoing the signed query', async () => {
    const { query, msg, sig } = signedQuery();
    const r = await t.app.inject({ method: 'GET', url: `/api/v4/workspace/keys/%ZZ?${query}` });
    expectProblem(r, 400, 'bad_url');
    for (const secret of [msg, encodeURIComponent(msg), sig, '%ZZ']) assert.ok(!r.body.includes(secret), `the answer echoes ${secret}`);
  });

  test('a path segment longer than the id limit is 414 uri_too_long as problem+json', async () => {
    const { query, sig } = signedQuery();
    const r = await t.app.inject({ method: 'GET', url: `/api/v4/monitoring/vod-stats/${'a'.repeat(MAX_ID_LENGTH + 1)}?${query}` });
    expectProblem(r, 414, 'uri_too_long');
    assert.ok(!r.body.includes(sig) && !r.body.includes('aaaa'), 'the answer echoes neither the path nor the query');
  });

  test('an id at the limit reaches its route: ingested with a 256-character asset id, read back with it', async () => {
    const assetId = 'a'.repeat(MAX_ID_LENGTH);
    const sessionId = 's'.repeat(MAX_ID_LENGTH);
    const accepted = await t.client.vodStats.ingest([{ type: 'start', owner: t.workspace.id, asset_id: assetId, session_id: sessionId }]);
    assert.equal(accepted.accepted, 1, JSON.stringify(accepted));
    const stats = await t.client.vodStats.asset(assetId);
    assert.equal(stats.id, assetId);
    assert.equal(stats.stats.sessions.new, 1);
    const owner = await t.client.core.send('GET', `/api/v4/monitoring/vod-stats/owner-summary/${'w'.repeat(MAX_ID_LENGTH)}`);
    assert.equal(owner.status, 403, 'a long workspace id reaches the route (and is not ours)');
  });

  test('a Content-Length that disagrees with the body is 400 bad_content_length, not malformed_json', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/api/v4/admin/workspaces', headers: { ...admin, 'content-type': 'application/json', 'content-length': '1000' }, payload: '{"name":"x"}' });
    expectProblem(r, 400, 'bad_content_length');
  });

  test('readiness is 503 when storage is gone', async () => {
    const extra = await createTestApp();
    await extra.runtime.storage.close();
    const r = await extra.app.inject({ url: '/readyz' });
    expectProblem(r, 503, 'service_unavailable');
    await extra.app.close();
  });
});
