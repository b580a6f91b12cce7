import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { routesOf } from '../../src/platform/http/route-table.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

describe('OpenAPI document', () => {
  let t: TestApp;
  let doc: { openapi: string; paths: Record<string, Record<string, unknown>> };
  before(async () => {
    t = await createTestApp();
    const response = await t.app.inject({ method: 'GET', url: '/api/v4/openapi.json' });
    assert.equal(response.statusCode, 200);
    doc = response.json();
  });
  after(() => t.close());

  test('validates as OpenAPI 3.1', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 2000));
    assert.equal(validator.version, '3.1');
  });

  test('every error answer is declared as application/problem+json with the Problem schema', () => {
    let errors = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const responses = (operation as { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }).responses ?? {};
        for (const [status, response] of Object.entries(responses)) {
          if (Number(status) < 400) continue;
          errors++;
          const where = `${method.toUpperCase()} ${path} ${status}`;
          assert.deepEqual(Object.keys(response.content ?? {}), ['application/problem+json'], where);
          assert.deepEqual(response.content?.['application/problem+json']?.schema, { $ref: '#/components/schemas/Problem' }, where);
        }
      }
    }
    assert.ok(errors > 50, `only ${errors} error answers documented`);
  });

  test('the auth scheme says that msg may carry request parameters', () => {
    const schemes = (doc as unknown as { components: { securitySchemes: Record<string, { description?: string }> } }).components.securitySchemes;
    assert.match(schemes.v4Msg?.description ?? '', /request parameters/);
  });

  test('lists every /api/v4 route with each of its methods', () => {
    const routes = routesOf(t.app);
    assert.ok(routes.length > 3);
    const missing = routes
      .filter((r) => r.url.startsWith('/api/v4/') && r.url !== '/api/v4/openapi.json' && r.method !== 'HEAD')
      .filter((r) => {
        const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
        return !doc.paths[path]?.[r.method.toLowerCase()];
      });
    assert.deepEqual(missing, [], 'every API route is documented');
  });
});
