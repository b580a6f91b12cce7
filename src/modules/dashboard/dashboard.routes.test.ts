import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { toProblem } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { missingAssets, prebuiltAssets, type DashboardAssets } from './dashboard-assets.js';
import { dashboardRoutes } from './dashboard.routes.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

const bareApp = async (assets: DashboardAssets): Promise<App> => {
  const app = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>();
  app.setErrorHandler((err, request, reply) => {
    const problem = toProblem(err, request.id);
    void reply.code(problem.status).type('application/problem+json').send(problem);
  });
  await app.register(async (web) => dashboardRoutes(web, { assets }));
  await app.ready();
  return app;
};

const assetPaths = (html: string): string[] => [...html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1] as string);

describe('dashboard route, served from source (built on first request)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  test('the page is public, revalidated, locked down by CSP, and 304 when unchanged', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/dashboard' });
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['cache-control'], 'no-cache');
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.match(String(page.headers['content-security-policy']), /script-src 'self'.*connect-src 'self'.*form-action 'none'/);
    assert.match(page.body, /<div id="app"><\/div>/);
    const etag = String(page.headers.etag);
    const again = await t.app.inject({ method: 'GET', url: '/dashboard/', headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.equal((await t.app.inject({ method: 'HEAD', url: '/dashboard' })).statusCode, 200);
  });

  test('assets have hashed names, their content types, a year of caching and gzip when asked', async () => {
    const paths = assetPaths((await t.app.inject({ method: 'GET', url: '/dashboard' })).body);
    assert.equal(paths.length, 2, 'one script and one stylesheet');
    for (const path of paths) {
      assert.match(path, /\/app-[A-Z0-9]{8}\.(js|css)$/);
      const plain = await t.app.inject({ method: 'GET', url: path });
      assert.equal(plain.statusCode, 200);
      assert.equal(plain.headers['content-type'], path.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(plain.headers['content-encoding'], undefined);
      const zipped = await t.app.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'br, gzip' } });
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      assert.equal(gunzipSync(zipped.rawPayload).toString('utf8'), plain.body);
    }
  });

  test('/favicon.ico is the dashboard icon (not a 404 in every browser tab)', async () => {
    const icon = await t.app.inject({ method: 'GET', url: '/favicon.ico' });
    assert.equal(icon.statusCode, 200);
    assert.equal(icon.headers['content-type'], 'image/svg+xml');
    assert.match(icon.body, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.match(String((await t.app.inject({ method: 'GET', url: '/dashboard' })).body), /<link rel="icon" href="\/favicon\.ico"/);
  });

  test('unknown or odd asset names are problems, never files', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/dashboard/assets/app-OLDBUILD.js' });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(missing.json().code, 'not_found');
    for (const url of ['/dashboard/assets/..%2Fmain.ts', '/dashboard/assets/.hidden', '/dashboard/main.ts', '/dashboard/assets/main.ts']) {
      const answer = await t.app.inject({ method: 'GET', url });
      assert.ok([400, 404].includes(answer.statusCode), `${url} answered ${answer.statusCode}`);
      assert.doesNotMatch(answer.body, /startDashboard/);
    }
  });

  test('the page is not part of the API document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v4/openapi.json' })).json() as { paths: Record<string, unknown> };
    assert.deepEqual(Object.keys(doc.paths).filter((p) => p.includes('dashboard')), []);
  });
});

describe('dashboard route, served from a build', () => {
  const out = mkdtempSync(join(tmpdir(), 'playline-dashboard-'));
  after(() => rmSync(out, { recursive: true, force: true }));

  test('`scripts/build-dashboard.ts <dir>` writes the files the route then serves', async () => {
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-dashboard.ts', out], { cwd: root, stdio: 'pipe' });
    const manifest = JSON.parse(readFileSync(join(out, 'build.json'), 'utf8')) as { files: string[] };
    assert.equal(manifest.files[0], 'index.html');
    const app = await bareApp(prebuiltAssets(out));
    try {
      const page = await app.inject({ method: 'GET', url: '/dashboard' });
      assert.equal(page.statusCode, 200);
      assert.equal(page.body, readFileSync(join(out, 'index.html'), 'utf8'));
      for (const path of assetPaths(page.body)) assert.equal((await app.inject({ method: 'GET', url: path })).statusCode, 200);
    } finally {
      await app.close();
    }
  });

  test('without a build the page answers 503 saying how to build it', async () => {
    const app = await bareApp(missingAssets);
    try {
      const page = await app.inject({ method: 'GET', url: '/dashboard' });
      assert.equal(page.statusCode, 503);
      assert.match(page.json().detail, /npm run build/);
    } finally {
      await app.close();
    }
  });
});
