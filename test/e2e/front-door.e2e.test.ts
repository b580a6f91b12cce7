import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const CHROMIUM = process.env.PLAYLINE_CHROMIUM ?? '/usr/bin/chromium';
const required = process.env.PLAYLINE_REQUIRE_SERVICES === '1';
const noBrowser = existsSync(CHROMIUM) || required ? false : `Chromium not found at ${CHROMIUM} (apt-get install chromium, or set PLAYLINE_CHROMIUM)`;
const artifacts = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

describe('what a new operator finds: the start banner, / and /docs', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-front-door-'));
  let server: ServerProcess;
  before(async () => {
    server = await startServerProcess({ PLAYLINE_DATA_DIR: dataDir });
  });
  after(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('the banner names the dashboard and the API reference, before the listening line', () => {
    const out = server.output();
    const dashboard = new RegExp(`^\\s+Dashboard:\\s+${server.url}/dashboard$`, 'm').exec(out);
    const reference = new RegExp(`^\\s+API reference:\\s+${server.url}/docs\\b.*${server.url}/api/v4/openapi\\.json`, 'm').exec(out);
    assert.ok(dashboard && reference, `banner:\n${out}`);
    assert.ok(out.indexOf('Playline listening on') > reference.index, 'the listening line stays last');
  });

  test('the root leads to the dashboard page', async () => {
    const response = await fetch(`${server.url}/`);
    assert.equal(response.status, 200);
    assert.equal(new URL(response.url).pathname, '/dashboard');
    assert.match(await response.text(), /<html/i);
  });

  describe('in Chromium', { skip: noBrowser }, () => {
    let browser: Browser;
    before(async () => {
      assert.ok(existsSync(CHROMIUM), `PLAYLINE_REQUIRE_SERVICES=1 but Chromium is missing at ${CHROMIUM}`);
      mkdirSync(artifacts, { recursive: true });
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    });
    after(() => browser?.close());

    test('/docs renders every tag of the API from /api/v4/openapi.json, with no CSP violation', async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const problems: string[] = [];
      const fetched: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (err) => problems.push(err.message));
      page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
      await page.goto(`${server.url}/docs`);
      await page.locator('.opblock-tag').first().waitFor({ timeout: 20_000 });
      const tags = await page.locator('.opblock-tag').allTextContents();
      for (const tag of ['workspaces', 'admin']) assert.ok(tags.some((t) => t.startsWith(tag)), `tag ${tag} in ${tags.join(', ')}`);
      assert.ok(fetched.includes('/api/v4/openapi.json'), `requests: ${fetched.join(' ')}`);
      await page.screenshot({ path: join(artifacts, 'api-reference.png') });
      assert.deepEqual(problems, []);
      await page.close();
    });

    test('/ in a browser ends on the dashboard', async () => {
      const page = await browser.newPage();
      await page.goto(`${server.url}/`);
      assert.equal(new URL(page.url()).pathname, '/dashboard');
      await page.close();
    });
  });
});
