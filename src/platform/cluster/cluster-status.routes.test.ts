import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_ADMIN_TOKEN, createTestApp, type TestApp } from '../../../test/helpers/test-app.js';

describe('cluster status API in the embedded mode', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());
  const admin = (method: 'GET' | 'POST', url: string, token = TEST_ADMIN_TOKEN) =>
    t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` } });

  test('GET /admin/cluster says embedded, with no instances', async () => {
    const res = await admin('GET', '/api/v4/admin/cluster');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      '@id': '/api/v4/admin/cluster',
      '@type': 'ClusterStatus',
      mode: 'embedded',
      instance_id: null,
      instances: [],
      stats: { rebuilding: false, built_at: null },
    });
  });

  test('it needs the admin token; an API key signature is not enough', async () => {
    assert.equal((await admin('GET', '/api/v4/admin/cluster', 'wrong-token-0123456789')).statusCode, 401);
    const signed = await t.client.core.send('GET', '/api/v4/admin/cluster');
    assert.equal(signed.status, 401);
  });
});
