import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { PlaylineClient } from '../../src/client/index.js';
import { artifactsDir, browserSkip, callbackReceiver, CHROMIUM, desktopBrowser, type CallbackReceiver } from '../helpers/browser.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { eventually } from '../helpers/eventually.js';

/**
 * The dashboard's Error Reporting view in Chromium against the real server process: the delivery
 * log, a payload, resend, resume (the button, and a passing test), at 1280 and 390 px. Skips
 * without Chromium unless PLAYLINE_REQUIRE_SERVICES=1. Screenshots go to test-artifacts/.
 */
const skip = browserSkip();
const artifacts = artifactsDir();
const WAIT = { timeout: 20_000 };

describe('dashboard Error Reporting: delivery log, resend and resume in Chromium', { skip }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-dashboard-webhooks-'));
  const profile = mkdtempSync(join(tmpdir(), 'playline-chromium-'));
  let server: ServerProcess;
  let context: BrowserContext;
  let page: Page;
  let client: PlaylineClient;
  let owner: string;
  let hook: CallbackReceiver;
  const pageErrors: string[] = [];

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `PLAYLINE_REQUIRE_SERVICES=1 but Chromium is missing at ${CHROMIUM}`);
    // Pauses last ten minutes here, so the page has all the time it needs to show one and resume it.
    // The server and the browser start side by side (each kept as it comes, for `after`).
    await Promise.all([
      startServerProcess({
        PLAYLINE_DATA_DIR: dataDir,
        PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32',
        PLAYLINE_CALLBACK_BACKOFF_MS: '600000',
        PLAYLINE_CALLBACK_BACKOFF_MAX_MS: '600000',
      }).then((started) => (server = started)),
      desktopBrowser(profile).then((launched) => (context = launched)),
    ]);
    const credentials = bootstrapCredentials(server);
    owner = credentials.owner;
    const key = credentials.key;
    client = new PlaylineClient({ baseUrl: server.url, owner, apiKey: key });
    hook = await callbackReceiver();
    await client.errorReporting.putSettings({ callback_url: hook.url });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (err) => pageErrors.push(`pageerror: ${err.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) pageErrors.push(m.text());
    });
    await page.goto(`${server.url}/dashboard`);
    await page.fill('#signin-owner', owner);
    await page.fill('#signin-key', key);
    await page.click('#signin-submit');
    await page.click('a[href="#error-reporting"]', WAIT);
  });

  after(async () => {
    await context?.close();
    await server?.stop();
    hook?.server.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  });

  /** A playback error event of the workspace: Error Reporting POSTs it to the callback. */
  const playbackError = async (session: string) => {
    const n = hook.bodies.length;
    await client.core.request('POST', '/api/v4/monitoring/events', { body: [{ type: 'error', owner, asset_id: 'asset-hooks', session_id: session, error_code: 110, http_status: 403 }] });
    await eventually(() => hook.bodies.length > n, 'the report reached the receiver');
  };
  const pausedUntil = async () => (await client.errorReporting.deliveries()).endpoint?.paused_until ?? null;

  test('a failed delivery shows in the log with its payload; resend delivers it again; Resume ends the pause', { timeout: 120_000 }, async () => {
    hook.answer(500);
    await playbackError('s1');
    const failedRow = '#delivery-attempts tbody tr:has(td:text-is("non_200"))';
    await page.waitForSelector(failedRow, WAIT);
    await page.waitForSelector('#callback-paused:not([hidden])', WAIT);
    // Time, then its actions (View, Resend) beside it, outcome, status.
    assert.match(String(await page.textContent(`${failedRow} td:nth-child(5)`)), /^500$/);
    await page.screenshot({ path: join(artifacts, 'dashboard-webhooks-failed.png'), fullPage: true });

    await page.click(`${failedRow} button:text-is("View")`);
    await page.waitForSelector('#delivery-detail:not([hidden])', WAIT);
    const payload = JSON.parse(String(await page.textContent('#delivery-payload'))) as { owner: string; code: number; subtype: string };
    assert.deepEqual([payload.owner, payload.code, payload.subtype], [owner, 403, 'web']);
    assert.match(String(await page.textContent('#delivery-headers')), /webhook-signature: v1,/);
    await page.screenshot({ path: join(artifacts, 'dashboard-webhooks-payload.png'), fullPage: true });

    hook.answer(200);
    const before = hook.bodies.length;
    await page.click(`${failedRow} button:text-is("Resend")`);
    await page.waitForSelector('#delivery-action.ok', WAIT);
    assert.match(String(await page.textContent('#delivery-action')), /^Resent att_\w+ as att_\w+: delivered: HTTP 200/);
    assert.equal(hook.bodies.length, before + 1);
    assert.equal(hook.bodies.at(-1), hook.bodies[before - 1], 'the same report, byte for byte');
    await page.waitForSelector('#delivery-attempts tbody tr:has(td:text-is("delivered")):has(td:text-matches("^resend of att_"))', WAIT);
    assert.ok(((await pausedUntil()) ?? 0) > Date.now(), 'a resend leaves the pause alone');

    await page.click('#callback-resume');
    await page.waitForSelector('#callback-paused', { state: 'hidden', ...WAIT });
    assert.match(String(await page.textContent('#delivery-action')), /^Resumed/);
    assert.equal(await pausedUntil(), null);
    await playbackError('s2');
    await page.waitForSelector('#delivery-attempts tbody tr:nth-child(3)', WAIT);
    await page.screenshot({ path: join(artifacts, 'dashboard-webhooks-resumed.png'), fullPage: true });
  });

  test('a passing Test of the saved URL resumes a paused endpoint', { timeout: 120_000 }, async () => {
    hook.answer(503);
    await playbackError('s3');
    await page.waitForSelector('#callback-paused:not([hidden])', WAIT);
    hook.answer(200);
    await page.fill('#callback-url', hook.url);
    await page.click('#callback-test');
    await page.waitForSelector('#callback-outcome.ok', WAIT);
    await page.waitForSelector('#callback-paused', { state: 'hidden', ...WAIT });
    assert.equal(await pausedUntil(), null);
  });

  test('at 390 px the log table scrolls inside its card, nothing wider than the screen', { timeout: 60_000 }, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForSelector('#delivery-attempts tbody tr', WAIT);
    const sizes = (await page.evaluate(`(() => {
      const box = document.querySelector('#view-error-reporting .table-scroll');
      const view = document.querySelector('#view-error-reporting');
      const wide = [...view.querySelectorAll('*')].filter((e) => e.getBoundingClientRect().right > view.getBoundingClientRect().right + 0.5 && !box.contains(e)).map((e) => e.tagName + '#' + e.id + '.' + e.className + ':' + e.getBoundingClientRect().right).slice(0, 5);
      return { wide, boxScroll: box.scrollWidth, boxWidth: box.clientWidth, viewScroll: view.scrollWidth, viewWidth: view.clientWidth, right: view.getBoundingClientRect().right };
    })()`)) as { wide: string[]; boxScroll: number; boxWidth: number; viewScroll: number; viewWidth: number; right: number };
    assert.ok(sizes.boxScroll > sizes.boxWidth, `the table is wider than its card and scrolls inside it: ${JSON.stringify(sizes)}`);
    assert.ok(sizes.viewScroll <= sizes.viewWidth, `the view itself does not overflow: ${JSON.stringify(sizes)}`);
    assert.ok(sizes.right <= 390, `the view fits the screen: ${JSON.stringify(sizes)}`);
    await page.screenshot({ path: join(artifacts, 'dashboard-webhooks-390.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    assert.deepEqual(pageErrors, []);
  });
});
