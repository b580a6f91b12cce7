import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

describe('front door: the root and the API reference', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  test('GET / redirects to the dashboard, unsigned', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/' });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/dashboard');
  });

  test('GET /docs answers the reference page, unsigned, with a strict content security policy', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assert.match(response.body, /<title>Playline v4 API reference<\/title>/);
    assert.match(response.body, /src="\/docs\/static\/swagger-initializer\.js"/);
    const csp = String(response.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
  });

  test('the reference reads the document the API serves, /api/v4/openapi.json', async () => {
    const initializer = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    assert.equal(initializer.statusCode, 200);
    assert.match(initializer.body, /"url":"\/api\/v4\/openapi\.json"/);
    const doc = await t.app.inject({ method: 'GET', url: '/api/v4/openapi.json' });
    assert.equal(doc.statusCode, 200);
    assert.equal(doc.json<{ openapi: string }>().openapi, '3.1.0');
  });

  test('the reference\'s own scripts are served', async () => {
    const bundle = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
    assert.equal(bundle.statusCode, 200);
    assert.match(String(bundle.headers['content-type']), /javascript/);
  });

  test('the reference is not part of the API document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v4/openapi.json' })).json<{ paths: Record<string, unknown> }>();
    assert.deepEqual(Object.keys(doc.paths).filter((p) => p === '/' || p.startsWith('/docs')), []);
  });
});
