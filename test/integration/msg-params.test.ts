import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { signV4 } from '../../src/platform/auth/v4-signature.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const helper = fileURLToPath(new URL('../fixtures/v4_params.py', import.meta.url));

interface Answer {
  status: number;
  body: { code?: string; items?: { id: string }[]; errors?: { path: string }[] };
}

describe('request parameters inside msg (the published helper\'s get_params)', () => {
  let t: TestApp;
  let nowS: number;
  before(async () => {
    t = await createTestApp();
    nowS = Math.floor(t.clock.now() / 1000);
    // a1 has 3 new sessions, a2 has 2, a3 has 1: the top 1 is a1.
    const events = [['a1', 3], ['a2', 2], ['a3', 1]].flatMap(([asset, n]) =>
      Array.from({ length: n as number }, (_, i) => ({ type: 'start' as const, owner: t.workspace.id, asset_id: asset as string, session_id: `${String(asset)}-s${i}` })),
    );
    assert.equal((await t.client.vodStats.ingest(events)).accepted, 6);
  });
  after(() => t.close());

  /** A GET signed by the Python helper with `params` in msg, `query` before msg and sig. */
  const viaHelper = async (path: string, params: Record<string, unknown>, query = ''): Promise<Answer> => {
    const signed = execFileSync('python3', [helper, t.workspace.id, t.key.secret, String(nowS), JSON.stringify(params), query], { encoding: 'utf8' }).trim();
    const r = await t.app.inject({ method: 'GET', url: `${path}?${signed}` });
    return { status: r.statusCode, body: r.json() };
  };

  test('top in msg is used: the top 1 asset only', async () => {
    const r = await viaHelper('/api/v4/monitoring/vod-stats', { top: 1 });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.items?.map((i) => i.id), ['a1']);
  });

  test('asset_ids in msg works on GET /monitoring/vod-stats/search', async () => {
    const r = await viaHelper('/api/v4/monitoring/vod-stats/search', { asset_ids: ['a2', 'a3', 'unknown'] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.items?.map((i) => i.id).sort(), ['a2', 'a3']);
  });

  test('the same parameter both ways with one value is fine; with two values it is 400 parameter_conflict', async () => {
    const same = await viaHelper('/api/v4/monitoring/vod-stats', { top: 2 }, 'top=2');
    assert.equal(same.status, 200);
    assert.equal(same.body.items?.length, 2);
    const differ = await viaHelper('/api/v4/monitoring/vod-stats', { top: 1 }, 'top=2');
    assert.equal(differ.status, 400);
    assert.equal(differ.body.code, 'parameter_conflict');
    assert.deepEqual(differ.body.errors?.map((e) => e.path), ['/querystring/top']);
  });

  test('a msg parameter is validated by the route\'s schema like a query parameter', async () => {
    const zero = await viaHelper('/api/v4/monitoring/vod-stats', { top: 0 });
    assert.equal(zero.status, 400);
    assert.equal(zero.body.code, 'validation_failed');
    assert.deepEqual(zero.body.errors?.map((e) => e.path), ['/querystring/top']);
    const object = await viaHelper('/api/v4/monitoring/vod-stats', { top: { n: 1 } });
    assert.equal(object.status, 400);
    assert.deepEqual(object.body.errors?.map((e) => e.path), ['/querystring/top']);
  });

  test('owner in msg naming another workspace is 403, as in the query string', async () => {
    const r = await viaHelper('/api/v4/monitoring/vod-stats', { owner: t.other.workspace.id });
    assert.equal(r.status, 403);
    assert.equal(r.body.code, 'forbidden_workspace');
  });

  test('a parameter the route does not take is ignored, as in the query string', async () => {
    const r = await viaHelper('/api/v4/workspace', { verbose: true });
    assert.equal(r.status, 200);
  });

  test('the Authorization: <msg> <sig> form carries msg parameters too', async () => {
    const { msg, sig } = signV4(t.workspace.id, t.key.secret, nowS, { top: 1 });
    const r = await t.app.inject({ method: 'GET', url: '/api/v4/monitoring/vod-stats', headers: { authorization: `${msg} ${sig}` } });
    assert.equal(r.statusCode, 200);
    assert.equal(r.json().items.length, 1);
  });
});
