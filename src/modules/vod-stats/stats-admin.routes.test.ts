import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_ADMIN_TOKEN, createTestApp, type TestApp } from '../../../test/helpers/test-app.js';

describe('statistics rebuild API in the embedded mode', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());
  const rebuild = (token = TEST_ADMIN_TOKEN) =>
    t.app.inject({ method: 'POST', url: '/api/v4/admin/cluster/rebuild-stats', headers: { authorization: `Bearer ${token}` } });

  test('a rebuild is refused (409): the embedded store restores itself from its own journal', async () => {
    const res = await rebuild();
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().code, 'conflict');
  });

  test('it needs the admin token; an API key signature is not enough', async () => {
    assert.equal((await rebuild('wrong-token-0123456789')).statusCode, 401);
    const signed = await t.client.core.send('POST', '/api/v4/admin/cluster/rebuild-stats');
    assert.equal(signed.status, 401);
  });
});
