import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { PlaylineClient } from '../../src/client/index.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';

/**
 * The dashboard in a real browser against the real server process: Debian's Chromium driven by
 * playwright-core. Without Chromium this file skips with a visible message, unless
 * PLAYLINE_REQUIRE_SERVICES=1 (CI), where it fails. Screenshots go to test-artifacts/.
 */
const CHROMIUM = process.env.PLAYLINE_CHROMIUM ?? '/usr/bin/chromium';
const required = process.env.PLAYLINE_REQUIRE_SERVICES === '1';
const skip = existsSync(CHROMIUM) || required ? false : `Chromium not found at ${CHROMIUM} (apt-get install chromium, or set PLAYLINE_CHROMIUM)`;
const artifacts = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const WAIT = { timeout: 20_000 };

/** A callback receiver on loopback answering `status`; it counts what it received. */
async function receiver(status: number): Promise<{ url: string; received: string[]; server: Server }> {
  const received: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push(body);
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'receiver says no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}/hook`, received, server };
}

const texts = (page: Page, selector: string) => page.locator(selector).allTextContents();
/** [localStorage.length, sessionStorage.length] (the page's code, as a string: this file has no DOM types). */
const storageSizes = (page: Page) => page.evaluate('[localStorage.length, sessionStorage.length]') as Promise<number[]>;

describe('dashboard in Chromium', { skip }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-dashboard-e2e-'));
  const profile = mkdtempSync(join(tmpdir(), 'playline-chromium-'));
  let server: ServerProcess;
  let context: BrowserContext;
  let page: Page;
  let owner: string;
  let key: string;
  let client: PlaylineClient;
  const requested: string[] = [];
  const consoleErrors: string[] = [];

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `PLAYLINE_REQUIRE_SERVICES=1 but Chromium is missing at ${CHROMIUM}`);
    mkdirSync(artifacts, { recursive: true });
    server = await startServerProcess({ PLAYLINE_DATA_DIR: dataDir, PLAYLINE_CALLBACK_ALLOWLIST: '127.0.0.1/32', PLAYLINE_SLICER_PROVISION_MS: '100' });
    owner = /Workspace ID: (\S+)/.exec(server.output())?.[1] ?? '';
    key = /API key:\s+(\S+)/.exec(server.output())?.[1] ?? '';
    assert.ok(owner && key, `no bootstrap key in:\n${server.output()}`);
    client = new PlaylineClient({ baseUrl: server.url, owner, apiKey: key });
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      viewport: { width: 1280, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('request', (r) => requested.push(r.url()));
    page.on('pageerror', (err) => consoleErrors.push(`pageerror: ${err.message}`));
    // Refused API calls log "Failed to load resource" by design; anything else (a CSP violation, an exception) is a bug.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) consoleErrors.push(m.text());
    });
  });

  after(async () => {
    await context?.close();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  });

  const signIn = async (apiKey: string) => {
    await page.fill('#signin-owner', owner);
    await page.fill('#signin-key', apiKey);
    await page.click('#signin-submit');
  };

  test('a wrong key shows why sign-in failed, and the key is kept nowhere', async () => {
    await page.goto(`${server.url}/dashboard`);
    await signIn('not-the-right-key');
    await page.waitForSelector('#signin-error:not([hidden])', WAIT);
    const message = await page.textContent('#signin-error');
    assert.match(String(message), /API key does not match this workspace.*invalid_signature, HTTP 401/);
    await page.screenshot({ path: join(artifacts, 'dashboard-signin-error.png') });
    assert.equal(page.url(), `${server.url}/dashboard`);
    assert.deepEqual(await storageSizes(page), [0, 0]);
  });

  test('signed in with the bootstrap key, the tiles and top assets show ingested events', async () => {
    await signIn(key);
    await page.waitForSelector('#workspace', WAIT);
    // Before any event, the page says how to get statistics.
    await page.waitForSelector('#view-overview .empty:has-text("POST /api/v4/monitoring/events"):has-text("npx playline simulate")', WAIT);
    await page.screenshot({ path: join(artifacts, 'dashboard-empty.png') });
    const event = (type: string, asset: string, session: string, extra: object = {}) => ({ type, owner, asset_id: asset, session_id: session, ...extra });
    const events = [
      ...[100, 200, 300, 400].flatMap((latency, i) => [event('request', 'asset-alpha', `a${i}`), event('manifest', 'asset-alpha', `a${i}`, { latency_ms: latency }), event('start', 'asset-alpha', `a${i}`)]),
      event('ad', 'asset-alpha', 'a0', { latency_ms: 50 }),
      ...['b0', 'b1'].flatMap((s) => [event('request', 'asset-beta', s), event('manifest', 'asset-beta', s, { latency_ms: 80 }), event('start', 'asset-beta', s)]),
      event('request', 'asset-beta', 'b2'),
      event('error', 'asset-beta', 'b2', { error_code: 104, http_status: 403, url: 'http://edge/play/asset-beta.m3u8', msg: 'Expired token' }),
    ];
    const ingested = await client.core.request<{ accepted: number }>('POST', '/api/v4/monitoring/events', { body: events.map((e) => JSON.stringify(e)).join('\n'), contentType: 'application/x-ndjson' });
    assert.equal(ingested.accepted, events.length);

    const expected = { requests: '7', manifest: '6', ad: '1', new: '6', errors: '1' };
    for (const [tile, value] of Object.entries(expected)) await page.waitForSelector(`#view-overview [data-tile="${tile}"] .tile-value:text-is("${value}")`, WAIT);
    await page.waitForSelector('#top-assets tbody tr:nth-child(2) a:text-is("asset-beta")', WAIT);
    assert.equal(await page.locator('#top-assets tbody tr').count(), 2);
    const cells = (row: number) => page.locator('#top-assets tbody tr').nth(row).locator('td').allTextContents();
    // Asset, new sessions, requests, manifests, ads, errors, manifest latency, ad latency, latest start.
    assert.deepEqual((await cells(0)).slice(0, 8), ['asset-alpha', '4', '4', '4', '1', '0', '250.0 ms', '50.0 ms']);
    assert.deepEqual((await cells(1)).slice(0, 8), ['asset-beta', '2', '3', '2', '0', '1', '80.0 ms', '—']);
    assert.deepEqual(await texts(page, '#view-overview table[aria-label="Playback errors by code"] tbody tr'), ['104Expired token1']);
    await page.screenshot({ path: join(artifacts, 'dashboard-overview.png'), fullPage: true });

    // A hundred assets refreshing every second: rows are diffed, so unchanged data writes nothing.
    const more = Array.from({ length: 98 }, (_, i) => event('start', `asset-${String(i).padStart(3, '0')}`, `c${i}`));
    await client.core.request('POST', '/api/v4/monitoring/events', { body: more });
    await page.waitForSelector('#top-assets tbody tr:nth-child(100)', WAIT);
    const writes = await page.evaluate(`new Promise((resolve) => {
      let writes = 0;
      let refreshes = 0;
      const rows = new MutationObserver((records) => { writes += records.length; });
      rows.observe(document.querySelector('#top-assets tbody'), { subtree: true, childList: true, characterData: true, attributes: true });
      const clock = new MutationObserver(() => {
        if (++refreshes < 3) return;
        rows.disconnect();
        clock.disconnect();
        resolve(writes);
      });
      clock.observe(document.querySelector('#overview-updated'), { subtree: true, childList: true, characterData: true });
    })`);
    assert.equal(writes, 0, 'three refreshes of unchanged statistics made no DOM writes in the table');
    assert.equal(await page.locator('#top-assets tbody tr').count(), 100);

    await page.click('#top-assets a[href="#asset/asset-alpha"]');
    await page.waitForSelector('#asset-chart canvas', WAIT);
    await page.waitForSelector('#view-asset [data-tile="new"] .tile-value:text-is("4")', WAIT);
    await page.screenshot({ path: join(artifacts, 'dashboard-asset.png'), fullPage: true });

    assert.ok(!page.url().includes(key) && !page.url().includes(encodeURIComponent(key)), 'the key is not in the URL');
    assert.equal((await storageSizes(page))[0], 0, 'nothing in localStorage');
    assert.ok(requested.every((url) => !url.includes(key) && !url.includes(encodeURIComponent(key))), 'no request carries the key');
  });

  test('a callback that fails its test shows what was observed and saves nothing; a working one saves', async () => {
    const failing = await receiver(500);
    const working = await receiver(200);
    try {
      await page.click('a[href="#error-reporting"]');
      await page.waitForSelector('#callback-current:not(:empty)', WAIT);
      await page.fill('#callback-url', failing.url);
      await page.click('#callback-save');
      await page.waitForSelector('#callback-outcome.problem:has-text("Nothing was saved")', WAIT);
      assert.match(String(await page.textContent('#callback-outcome')), /HTTP 500.*non_200/);
      await page.screenshot({ path: join(artifacts, 'dashboard-callback-refused.png') });
      const unchanged = await client.core.request<{ callback_url: string | null }>('GET', '/api/v4/error-reporting/settings');
      assert.equal(unchanged.callback_url, null);
      assert.equal(failing.received.length, 1, 'the test POST reached the failing receiver');

      await page.fill('#callback-url', working.url);
      await page.click('#callback-save');
      // The success class, not the text: has-text is case-insensitive, and the refusal shown until the
      // answer arrives says "Not saved: ...", which contains "saved:" (under load the old wait passed early).
      await page.waitForSelector('#callback-outcome.ok', WAIT);
      assert.match(String(await page.textContent('#callback-outcome')), /^Saved: the test POST was answered 200/);
      const saved = await client.core.request<{ callback_url: string | null; enabled: boolean }>('GET', '/api/v4/error-reporting/settings');
      assert.deepEqual([saved.callback_url, saved.enabled], [working.url, true]);

      // A playback error now reaches the receiver and shows in the recent deliveries.
      await client.core.request('POST', '/api/v4/monitoring/events', { body: [{ type: 'error', owner, asset_id: 'asset-beta', session_id: 'b9', error_code: 110, http_status: 403 }] });
      await page.waitForSelector('#delivery-attempts tbody tr td:text-is("delivered")', WAIT);
      await page.screenshot({ path: join(artifacts, 'dashboard-error-reporting.png'), fullPage: true });
    } finally {
      failing.server.close();
      working.server.close();
    }
  });

  test('starting a schedule from the page turns its target active', async () => {
    const target = await client.core.request<{ id: string }>('POST', '/api/v4/syndication-target', { body: { description: 'Twitch main channel', platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_123_secret' } });
    const schedule = await client.core.request<{ id: string }>('POST', '/api/v4/syndication-schedule', { body: { syndication_target_id: target.id, content_id: 'event-42', content_type: 'e', region: 'us-west-2' } });
    await page.click('a[href="#publishing"]');
    const status = `#targets tr[data-key="${target.id}"] td.badge`;
    await page.waitForSelector(`${status}:text-is("stopped")`, WAIT);
    await page.click(`#schedules tr[data-key="${schedule.id}"] button`);
    await page.waitForSelector(`${status}:text-is("active")`, WAIT);
    const after = await client.core.request<{ status: string }>('GET', `/api/v4/syndication-target/${target.id}`);
    assert.equal(after.status, 'active');
    assert.equal(await page.textContent(`#schedules tr[data-key="${schedule.id}"] button`), 'Stop');
    await page.screenshot({ path: join(artifacts, 'dashboard-publishing.png'), fullPage: true });
  });

  test('slicer tasks show with their state', async () => {
    await client.core.request('POST', '/api/v4/managed-slicer/slicers', { body: { name: 'Studio A', region: 'us-west-2', ingest_protocol: 'rtmp', output_profile: 'hd-720p' } });
    await page.click('a[href="#slicers"]');
    await page.waitForSelector('#slicer-tasks tbody tr:has(td:text-is("CREATE")):has(td:text-is("COMPLETED"))', WAIT);
  });

  test('signing out forgets the key; the page logged no errors', async () => {
    await page.click('#signout');
    await page.waitForSelector('#signin', WAIT);
    assert.deepEqual(await storageSizes(page), [0, 0]);
    assert.deepEqual(consoleErrors, []);
  });
});
