import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/test-app.js';

// issue 36: the document's servers was null, so generated clients and "Try it out" had no base URL.
test('the OpenAPI document names its server: the origin it is served from', async () => {
  const t = await createTestApp();
  try {
    const response = await t.app.inject({ method: 'GET', url: '/api/v4/openapi.json', headers: { host: 'evil.example' } });
    assert.equal(response.statusCode, 200);
    const doc = JSON.parse(response.body) as { servers?: { url: string }[] | null };
    assert.deepEqual(doc.servers?.map((s) => s.url), ['/']);
    assert.ok(!response.body.includes('evil.example'), 'no Host header echoed into the document');
  } finally {
    await t.close();
  }
});
