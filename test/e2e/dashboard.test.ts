import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { PlaylineClient } from '../../src/client/index.js';
import type { PlaybackEventInput } from '../../src/client/vod-stats.js';
import { seededRandom } from '../../src/modules/vod-stats/test-events.test-support.js';
import { artifactsDir, browserSkip, callbackReceiver, CHROMIUM, desktopBrowser } from '../helpers/browser.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

/**
 * The dashboard in a real browser against the real server process: Debian's Chromium driven by
 * playwright-core. Without Chromium this file skips with a visible message, unless
 * PLAYLINE_REQUIRE_SERVICES=1 (CI), where it fails. Screenshots go to test-artifacts/.
 */
const skip = browserSkip();
const artifacts = artifactsDir();
const WAIT = { timeout: 20_000 };
const ADMIN_TOKEN = 'dashboard-e2e-admin-token-0123456789';

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
    // The server and the browser start side by side (each kept as it comes, for `after`).
    await Promise.all([
      startServerProcess({ PLAYLINE_DATA_DIR: dataDir, PLAYLINE_ADMIN_TOKEN: ADMIN_TOKEN, PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_SLICER_PROVISIONER: 'simulated', PLAYLINE_SLICER_PROVISION_MS: '100', PLAYLINE_PUBLISHER: 'simulated' }).then((started) => (server = started)),
      desktopBrowser(profile).then((launched) => (context = launched)),
    ]);
    ({ owner, key } = bootstrapCredentials(server));
    client = new PlaylineClient({ baseUrl: server.url, owner, apiKey: key });
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
    await page.waitForSelector('#asset-history [data-chart="sessions"] canvas', WAIT);
    await page.waitForSelector('#view-asset [data-tile="new"] .tile-value:text-is("4")', WAIT);
    await page.screenshot({ path: join(artifacts, 'dashboard-asset.png'), fullPage: true });

    assert.ok(!page.url().includes(key) && !page.url().includes(encodeURIComponent(key)), 'the key is not in the URL');
    assert.equal((await storageSizes(page))[0], 0, 'nothing in localStorage');
    assert.ok(requested.every((url) => !url.includes(key) && !url.includes(encodeURIComponent(key))), 'no request carries the key');
  });

  test('a callback that fails its test shows what was observed and saves nothing; a working one saves', async () => {
    const failing = await callbackReceiver(500);
    const working = await callbackReceiver(200);
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
      assert.equal(failing.bodies.length, 1, 'the test POST reached the failing receiver');

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
    await page.waitForSelector('#slicers tbody tr:has(td:text-is("Studio A")):has(td.badge:text-is("running"))', WAIT);
  });

  /** The history API's points for a range (what the page must show). */
  const historyPoints = async (range: '15m' | '1h' | '6h' | '24h', assetId?: string) =>
    (await client.vodStats.history({ range, ...(assetId ? { asset_id: assetId } : {}) })).total_points;
  const chartsShow = (prefix: string, range: string, points: number) =>
    page.waitForSelector(`#${prefix}[data-range="${range}"][data-points="${points}"] [data-chart="errors"] canvas`, WAIT);

  test('history charts come from the server: the range picked shows its points, and a reload shows them again', async () => {
    const now = Date.now();
    const minutesAgo = (m: number) => now - m * 60_000;
    const event = (type: string, asset: string, session: string, ts: number, extra: object = {}) => ({ type, owner, asset_id: asset, session_id: session, ts, ...extra });
    // Hours-old traffic (late events, up to 24 h, count in the minutes they belong to).
    await client.vodStats.ingest([
      ...['o1', 'o2', 'o3'].flatMap((s, i) => [
        event('request', 'asset-old', s, minutesAgo(180) + i),
        event('manifest', 'asset-old', s, minutesAgo(180) + i, { latency_ms: 300 + i * 100 }),
        event('start', 'asset-old', s, minutesAgo(180) + i, { startup_ms: 900 }),
      ]),
      event('request', 'asset-alpha', 'h1', minutesAgo(45)),
      event('error', 'asset-alpha', 'h1', minutesAgo(45), { error_code: 103 }),
      event('start', 'asset-alpha', 'h2', minutesAgo(100)),
      event('rebuffer', 'asset-alpha', 'a1', minutesAgo(2)),
    ] as Partial<PlaybackEventInput>[]);
    await page.click('a[href="#overview"]');
    const short = await historyPoints('15m');
    const long = await historyPoints('6h');
    assert.ok(long >= short + 3, `6 h (${long} minutes with events) holds the hours-old minutes 15 min (${short}) does not`);

    await page.click('#overview-history button[data-range="15m"]');
    await chartsShow('overview-history', '15m', short);
    await page.click('#overview-history button[data-range="6h"]');
    await chartsShow('overview-history', '6h', long);
    assert.match(String(await page.textContent('#overview-history-summary')), new RegExp(`Last 6 h, .*: ${long} minutes with events`));
    assert.equal(await page.locator('#overview-history .chart-card').count(), 4, 'sessions, errors, latency, rebuffering and startup');
    await page.screenshot({ path: join(artifacts, 'dashboard-history-1280.png'), fullPage: true });

    // A reload: the session and the range are the tab's; the points are the server's.
    await page.reload();
    await chartsShow('overview-history', '6h', long);
    const legend = await page.locator('#overview-history [data-chart="errors"] .u-legend').textContent();
    assert.match(String(legend), /103 Invalid|103/, 'the errors chart has a series per code in the range');

    // One asset's history, from the same API.
    await page.click('#top-assets a[href="#asset/asset-alpha"]');
    await chartsShow('asset-history', '6h', await historyPoints('6h', 'asset-alpha'));
    await page.click('#asset-history button[data-range="24h"]');
    await chartsShow('asset-history', '24h', await historyPoints('24h', 'asset-alpha'));
    await page.reload();
    await chartsShow('asset-history', '24h', await historyPoints('24h', 'asset-alpha'));
    await page.screenshot({ path: join(artifacts, 'dashboard-asset-history-1280.png'), fullPage: true });
  });

  test('top assets: a header click sorts, the box filters by asset id, and old windows are marked stale', async () => {
    await page.click('a[href="#overview"]');
    const row = (id: string) => `#top-assets tbody tr[data-key="${id}"]`;
    await page.waitForSelector(`${row('asset-old')}.stale td.stale-mark:text-is("stale")`, WAIT);
    assert.equal(await page.textContent(`${row('asset-alpha')} td.live-mark`), 'live');
    assert.match(String(await page.getAttribute(`${row('asset-old')} td.stale-mark`, 'title')), /window ended at .* more than 5 minutes ago: these are not live totals/);

    const column = async (index: number) => page.locator(`#top-assets tbody tr td:nth-child(${index})`).allTextContents();
    const numbers = (texts: string[]) => texts.map((t) => Number(t.replace(/,/g, '')));
    await page.click('#top-assets th button.sort:text-is("Requests")');
    await page.waitForSelector('#top-assets th[aria-sort="descending"]:has-text("Requests")', WAIT);
    const down = numbers(await column(3));
    assert.deepEqual(down, [...down].sort((a, b) => b - a), 'largest first');
    assert.equal((await column(1))[0], 'asset-alpha', 'the most requests in its window (4)');
    await page.click('#top-assets th button.sort:text-is("Requests")');
    await page.waitForSelector('#top-assets th[aria-sort="ascending"]:has-text("Requests")', WAIT);
    const up = numbers(await column(3));
    assert.deepEqual(up, [...up].sort((a, b) => a - b), 'then smallest first');
    await page.click('#top-assets th button.sort:text-is("Asset")');
    const ids = await column(1);
    assert.deepEqual(ids, [...ids].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })));

    await page.fill('#asset-filter', 'ALPHA');
    await page.waitForSelector('#top-assets-count:text-is("1 of 100 assets")', WAIT);
    assert.deepEqual(await column(1), ['asset-alpha']);
    await page.fill('#asset-filter', 'asset-0');
    await page.waitForFunction('document.querySelectorAll("#top-assets tbody tr").length > 1', undefined, WAIT);
    assert.ok((await column(1)).every((id) => id.startsWith('asset-0')));
    await page.screenshot({ path: join(artifacts, 'dashboard-top-assets-filtered.png') });
    await page.fill('#asset-filter', '');
    await page.waitForSelector('#top-assets-count:text-is("100 assets")', WAIT);
    await page.check('#hide-stale');
    await page.waitForSelector('#top-assets-count:text-is("99 of 100 assets")', WAIT);
    assert.equal(await page.locator(row('asset-old')).count(), 0, 'the stale row is hidden, the live ones stay');
    await page.uncheck('#hide-stale');
    await page.waitForSelector('#top-assets-count:text-is("100 assets")', WAIT);
  });

  test('API keys: create shows the secret once, the key signs, revoke stops it; the signing key cannot be revoked', async () => {
    await page.click('a[href="#keys"]');
    await page.waitForSelector('#keys tbody tr', WAIT);
    await page.fill('#key-label', 'grafana exporter');
    await page.click('#key-create');
    await page.waitForSelector('#key-secret-box:not([hidden])', WAIT);
    const secret = String(await page.textContent('#key-secret'));
    assert.match(secret, /^[A-Za-z0-9_-]{40}$/);
    const created = (await client.workspace.keys()).find((k) => k.label === 'grafana exporter');
    assert.ok(created && secret.startsWith(created.prefix));
    const withNewKey = new PlaylineClient({ baseUrl: server.url, owner, apiKey: secret });
    assert.equal((await withNewKey.workspace.get()).id, owner, 'the new key signs');
    await page.screenshot({ path: join(artifacts, 'dashboard-key-created.png'), fullPage: true });

    // Shown once: leaving the view forgets it, and the list never has it.
    await page.click('a[href="#overview"]');
    await page.click('a[href="#keys"]');
    await page.waitForSelector(`#keys tr[data-key="${created.id}"]`, WAIT);
    assert.equal(await page.isVisible('#key-secret-box'), false);
    assert.equal((await page.content()).includes(secret), false, 'the secret is nowhere in the page any more');
    const mine = (await client.workspace.keys()).find((k) => key.startsWith(k.prefix));
    assert.equal(await page.isDisabled(`#keys tr[data-key="${String(mine?.id)}"] button`), true, 'the page cannot revoke the key it signs with');

    await page.click(`#keys tr[data-key="${created.id}"] button`);
    await page.waitForSelector(`#keys tr[data-key="${created.id}"] button:text-is("Confirm revoke")`, WAIT);
    await page.click(`#keys tr[data-key="${created.id}"] button`);
    await page.waitForSelector(`#keys tr.revoked[data-key="${created.id}"] td:has-text("revoked")`, WAIT);
    await assert.rejects(withNewKey.workspace.get(), /401/);
  });

  test('sharing: a workspace added from the form is shared with (bad and unknown ids say why), stop sharing takes a second click', async () => {
    const created = await fetch(`${server.url}/api/v4/admin/workspaces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'partner' }),
    });
    assert.equal(created.status, 201);
    const partner = ((await created.json()) as { id: string }).id;
    await page.click('a[href="#shares"]');
    await page.waitForSelector('#shares-empty:not([hidden])', WAIT);

    const problemLine = '#view-shares p.problem:not([hidden])';
    await page.fill('#share-grantee', 'not a workspace id');
    await page.click('#share-add');
    assert.match(String(await (await page.waitForSelector(problemLine, WAIT)).textContent()), /a workspace id is 1-64 of/);
    await page.fill('#share-grantee', 'f'.repeat(32));
    await page.click('#share-add');
    await page.waitForSelector(`${problemLine}:has-text("does not exist")`, WAIT);
    await page.fill('#share-grantee', owner);
    await page.click('#share-add');
    await page.waitForSelector(`${problemLine}:has-text("always plays its own content")`, WAIT);
    assert.deepEqual(await client.workspace.shares(), [], 'nothing saved by the refused ones');

    await page.fill('#share-grantee', partner);
    await page.click('#share-add');
    await page.waitForSelector(`#shares tr[data-key="${partner}"]`, WAIT);
    assert.match(String(await page.textContent('#share-added')), new RegExp(`Shared with ${partner}: its URLs with coid=${owner} play`));
    assert.deepEqual((await client.workspace.shares()).map((x) => x.grantee_id), [partner]);
    assert.equal(await page.isVisible('#shares-empty'), false);
    await page.screenshot({ path: join(artifacts, 'dashboard-shares.png'), fullPage: true });

    await page.click(`#shares tr[data-key="${partner}"] button`);
    await page.waitForSelector(`#shares tr[data-key="${partner}"] button:text-is("Confirm stop")`, WAIT);
    assert.equal((await client.workspace.shares()).length, 1, 'the first click only asks');
    await page.click(`#shares tr[data-key="${partner}"] button`);
    await page.waitForSelector('#shares-empty:not([hidden])', WAIT);
    assert.deepEqual(await client.workspace.shares(), []);
  });

  test('usage: each quota of the workspace with what it uses and its limit, as the API reports', async () => {
    await page.click('a[href="#usage"]');
    await page.waitForSelector('#usage tr[data-key="storage_bytes"]', WAIT);
    const usage = await client.workspace.usage();
    const row = (quota: string) => page.$$eval(`#usage tr[data-key="${quota}"] td`, (tds) => tds.map((td) => td.textContent ?? ''));
    const slicers = await row('slicers');
    assert.deepEqual(slicers.slice(1), [String(usage.quotas.slicers.used), String(usage.quotas.slicers.limit), `${Math.floor((usage.quotas.slicers.used / usage.quotas.slicers.limit) * 100)} %`]);
    assert.equal((await row('storage_bytes'))[2], '100.0 GiB', 'bytes in binary units');
    const counted = new Intl.NumberFormat('en-US');
    for (const quota of ['assets', 'targets', 'schedules', 'active_pushes'] as const) assert.equal((await row(quota))[2], counted.format(usage.quotas[quota].limit), quota);
    await page.screenshot({ path: join(artifacts, 'dashboard-usage.png'), fullPage: true });
  });

  test('slicers: create from the form, restart, rotate the stream key, delete', async () => {
    await page.click('a[href="#slicers"]');
    await page.waitForSelector('#slicer-region option[value="us-west-2"]', { ...WAIT, state: 'attached' });
    await page.fill('#slicer-name', 'Studio B');
    await page.selectOption('#slicer-protocol', 'srt');
    await page.click('#slicer-create');
    const slicer = async () => (await client.core.request<{ items: { id: string; name: string; state: string }[] }>('GET', '/api/v4/managed-slicer/slicers')).items.find((s) => s.name === 'Studio B');
    await page.waitForSelector('#slicers tbody tr:has(td:text-is("Studio B")):has(td:text-is("CREATE COMPLETED"))', WAIT);
    const created = await slicer();
    assert.ok(created);
    const row = `#slicers tr[data-key="${created.id}"]`;
    await page.click(`${row} button:text-is("Restart")`);
    await page.waitForSelector(`${row} td:text-is("RESTART COMPLETED")`, WAIT);
    await page.waitForSelector(`#slicer-tasks tbody tr:has(td:text-is("RESTART")):has(td:text-is("Studio B"))`, WAIT);
    await page.screenshot({ path: join(artifacts, 'dashboard-slicers.png'), fullPage: true });
    // Rotation asks for a second click, then shows the new ingest URL (and the row shows it too).
    const before = (await client.managedSlicers.get(created.id)).ingest_url ?? '';
    assert.match(before, /\?passphrase=[A-Za-z0-9_-]{32}&pbkeylen=16$/);
    await page.click(`${row} button:text-is("Rotate stream key")`);
    await page.click(`${row} button:text-is("Confirm rotate")`);
    await page.waitForSelector('#slicer-rotated:not([hidden])', WAIT);
    const rotated = (await client.managedSlicers.get(created.id)).ingest_url ?? '';
    assert.notEqual(rotated, before);
    assert.equal(await page.textContent('#slicer-rotated-url'), rotated);
    // The table never shows a key until asked: server and masked key apart (OBS wants them so), Show and Copy.
    const newKey = /passphrase=([A-Za-z0-9_-]{32})/.exec(rotated)?.[1] ?? '';
    await page.waitForSelector(`${row} code.ingest-server:text-is("${rotated.replace(/\?.*$/, '')}")`, WAIT);
    assert.equal(await page.textContent(`${row} code.ingest-key`), '••••••••');
    assert.equal(String(await page.textContent('#slicers')).includes(newKey), false, 'the key is not in the table text');
    await page.click(`${row} button.ingest-reveal`);
    await page.waitForSelector(`${row} code.ingest-key:text-is("${newKey}")`, WAIT);
    await page.screenshot({ path: join(artifacts, 'dashboard-slicers-key-shown.png') });
    await page.click(`${row} button.ingest-reveal`);
    await page.waitForSelector(`${row} code.ingest-key:text-is("••••••••")`, WAIT);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await page.click(`${row} button.ingest-copy-key`);
    await page.waitForSelector(`${row} button.ingest-copy-key:text-is("Copied")`, WAIT);
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), newKey, 'Copy puts the key on the clipboard');
    await page.click(`${row} button.ingest-copy-url`);
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), rotated);
    await page.click(`${row} button:text-is("Delete")`);
    await page.click(`${row} button:text-is("Confirm delete")`);
    await page.waitForSelector(`#slicer-tasks tbody tr:has(td:text-is("DELETE")):has(td:text-is("COMPLETED"))`, WAIT);
    const tasks = await client.core.request<{ items: { operation: string; state: string; slicer_id: string }[] }>('GET', '/api/v4/managed-slicer/slicers/tasks');
    assert.deepEqual(tasks.items.filter((t) => t.slicer_id === created.id).map((t) => `${t.operation} ${t.state}`).sort(), ['CREATE COMPLETED', 'DELETE COMPLETED', 'RESTART COMPLETED', 'RESTART COMPLETED']);
  });

  test('publishing: create a target, an edit breaking a rule shows the API error next to its field; a schedule created, started, stopped and edited', async () => {
    await page.click('a[href="#publishing"]');
    await page.fill('#target-description', 'Backup RIST feed');
    await page.selectOption('#target-platform', 'Twitch');
    await page.fill('#target-stream', 'live_987_secret');
    await page.click('#target-save');
    await page.waitForSelector('#target-outcome:has-text("Created: Backup RIST feed")', WAIT);
    const targets = await client.core.request<{ items: { id: string; description: string; platform: string; target_protocol: string }[] }>('GET', '/api/v4/syndication-target');
    const target = targets.items.find((t) => t.description === 'Backup RIST feed');
    assert.ok(target);
    const row = `#targets tr[data-key="${target.id}"]`;
    await page.waitForSelector(row, WAIT);

    await page.click(`${row} button:text-is("Edit")`);
    await page.waitForSelector('#target-form-title:has-text("Edit Backup RIST feed")', WAIT);
    assert.equal(await page.inputValue('#target-stream'), '********', 'the stored secret shows masked');
    await page.selectOption('#target-platform', 'Custom');
    await page.selectOption('#target-protocol', 'rist');
    await page.fill('#target-stream', 'rist://198.51.100.7:1235');
    await page.click('#target-save');
    const inline = '#target-form [data-error-for="/target_stream"]:not([hidden])';
    await page.waitForSelector(inline, WAIT);
    assert.match(String(await page.textContent(inline)), /even/i);
    assert.equal(await page.getAttribute('#target-stream', 'aria-invalid'), 'true');
    await page.screenshot({ path: join(artifacts, 'dashboard-target-rule-error.png'), fullPage: true });
    const unchanged = await client.core.request<{ platform: string }>('GET', `/api/v4/syndication-target/${target.id}`);
    assert.equal(unchanged.platform, 'Twitch', 'nothing was saved');
    await page.fill('#target-stream', 'rist://198.51.100.7:1236');
    await page.click('#target-save');
    await page.waitForSelector('#target-outcome:has-text("Saved: Backup RIST feed (Custom, rist)")', WAIT);
    assert.equal(await page.isVisible(inline), false);
    const saved = await client.core.request<{ platform: string; target_protocol: string }>('GET', `/api/v4/syndication-target/${target.id}`);
    assert.deepEqual([saved.platform, saved.target_protocol], ['Custom', 'rist']);

    // A schedule from the form, started and stopped from its row.
    await page.selectOption('#schedule-target', target.id);
    await page.fill('#schedule-content', 'channel-7');
    await page.selectOption('#schedule-content-type', 'c');
    await page.click('#schedule-create');
    await page.waitForSelector('#schedules tbody tr:has(td:text-is("live channel channel-7"))', WAIT);
    const schedule = (await client.core.request<{ items: { id: string; content_id: string }[] }>('GET', '/api/v4/syndication-schedule')).items.find((s) => s.content_id === 'channel-7');
    assert.ok(schedule);
    const srow = `#schedules tr[data-key="${schedule.id}"]`;
    await page.click(`${srow} button:text-is("Start")`);
    await page.waitForSelector(`${srow} td.badge:text-is("active")`, WAIT);
    await page.waitForSelector(`${row} td.badge:text-is("active")`, WAIT);
    assert.equal(await page.isDisabled(`${srow} button:text-is("Edit")`), true, 'an active schedule is stopped before it is edited');
    await page.click(`${srow} button:text-is("Stop")`);
    await page.waitForSelector(`${srow} td.badge:text-is("stopped")`, WAIT);
    const stopped = await client.core.request<{ status: string }>('GET', `/api/v4/syndication-schedule/${schedule.id}`);
    assert.equal(stopped.status, 'stopped');
    await page.click(`${srow} button:text-is("Edit")`);
    await page.waitForSelector('#schedule-form-title:has-text("Edit the schedule of live channel channel-7")', WAIT);
    await page.fill('#schedule-content', 'channel-8');
    await page.click('#schedule-create');
    await page.waitForSelector(`${srow} td:text-is("live channel channel-8")`, WAIT);
    const edited = await client.core.request<{ content_id: string }>('GET', `/api/v4/syndication-schedule/${schedule.id}`);
    assert.equal(edited.content_id, 'channel-8');
  });

  test('every view at 390 px (no page scroll sideways: tables scroll in their card) and at 1280 px (long messages wrap)', async () => {
    const views = [
      { hash: '#overview', ready: '#top-assets tbody tr' },
      { hash: '#library', ready: '#view-library .empty:has-text("No assets yet")' },
      { hash: '#asset/asset-alpha', ready: '#asset-history [data-chart="sessions"] canvas' },
      { hash: '#error-reporting', ready: '#callback-current:not(:empty)' },
      { hash: '#publishing', ready: '#targets tbody tr' },
      { hash: '#slicers', ready: '#slicer-tasks tbody tr' },
      { hash: '#keys', ready: '#keys tbody tr' },
      { hash: '#shares', ready: '#share-form' },
      { hash: '#usage', ready: '#usage tbody tr' },
      { hash: '#settings', ready: '#settings-media-tools:not(:empty)' },
    ];
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      for (const view of views) {
        await page.evaluate(`location.hash = ${JSON.stringify(view.hash)}`);
        await page.waitForSelector(view.ready, WAIT);
        // Charts size themselves to their card after a resize: give layout a frame.
        await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
        const [scrollWidth, innerWidth] = (await page.evaluate('[document.documentElement.scrollWidth, innerWidth]')) as number[];
        assert.ok((scrollWidth as number) <= (innerWidth as number), `${view.hash} at ${width} px: page ${scrollWidth} px wide in a ${innerWidth} px window`);
        const overflowing = (await page.evaluate(`[...document.querySelectorAll('.view:not([hidden]) .table-scroll')]
          .filter((box) => box.scrollWidth > box.clientWidth + 1).map((box) => ({ table: box.querySelector('table')?.getAttribute('aria-label'), cue: box.dataset.overflow }))`)) as { table: string; cue: string }[];
        // A table wider than its card always shows which way it scrolls (a shadow on that edge).
        assert.deepEqual(overflowing.filter((o) => o.cue !== 'right' && o.cue !== 'left' && o.cue !== 'both'), [], `${view.hash} at ${width} px: a table wider than its card without a scroll cue`);
        // Wide enough for every table: long text wraps in its cell, nothing scrolls sideways.
        if (width === 1280) assert.deepEqual(overflowing.map((o) => o.table), [], `${view.hash} at 1280 px: tables wider than their card`);
        // Each row's actions are in reach beside its name, without scrolling the table.
        const beside = (await page.evaluate(`[...document.querySelectorAll('.view:not([hidden]) table.data tbody tr:first-child')]
          .filter((tr) => tr.querySelector('td.sticky') && tr.querySelector('.row-actions button'))
          .map((tr) => { const box = tr.closest('.table-scroll').getBoundingClientRect(); const b = tr.querySelector('.row-actions button:last-child').getBoundingClientRect(); const n = tr.querySelector('td.sticky').getBoundingClientRect();
            return { table: tr.closest('table').getAttribute('aria-label'), inView: b.left >= box.left - 1 && b.right <= box.right + 1 && n.left >= box.left - 1 && n.right <= box.right + 1 }; })`)) as { table: string; inView: boolean }[];
        assert.deepEqual(beside.filter((b) => !b.inView), [], `${view.hash} at ${width} px: row actions out of reach of the name`);
        const name = view.hash.slice(1).replace(/\//g, '-');
        await page.screenshot({ path: join(artifacts, `dashboard-${name}-${width}.png`), fullPage: true });
      }
    }
    // The ingest column: the RTMP server and the masked stream name apart, as OBS asks for them.
    await page.evaluate('location.hash = "#slicers"');
    await page.waitForSelector('#slicers tbody tr code.ingest-server', WAIT);
    const ingest = (await page.evaluate(`[...document.querySelectorAll('#slicers tbody tr')].map((tr) => [tr.querySelector('code.ingest-server')?.textContent, tr.querySelector('code.ingest-key')?.textContent])`)) as string[][];
    assert.ok(ingest.some(([serverPart, keyPart]) => /^rtmp:\/\/.+\/live$/.test(serverPart ?? '') && keyPart === '••••••••'), JSON.stringify(ingest));
  });

  test('an hour of traffic for the README picture (docs/dashboard.png is taken from test-artifacts/dashboard-readme.png)', async () => {
    // Deterministic traffic over the last hour: a dozen titles, latency, ads, startup, rebuffers, a few errors.
    const random = seededRandom(16);
    const now = Date.now();
    const events: object[] = [];
    for (let m = 60; m >= 1; m--) {
      const sessions = 18 + Math.round(8 * Math.sin(m / 9) + 6 * random());
      for (let i = 0; i < sessions; i++) {
        const at = now - m * 60_000 + Math.floor(random() * 55_000);
        const base = { owner, asset_id: `movie-${String(1 + Math.floor(random() * 12)).padStart(2, '0')}`, session_id: `demo-${m}-${i}` };
        events.push({ ...base, type: 'request', ts: at });
        if (random() < 0.04) {
          events.push({ ...base, type: 'error', ts: at + 50, error_code: [103, 104, 110][Math.floor(random() * 3)], http_status: 403 });
          continue;
        }
        events.push({ ...base, type: 'manifest', ts: at + 100, latency_ms: Math.round(60 + 140 * random() + (m < 20 ? 90 : 0)) });
        if (random() < 0.3) events.push({ ...base, type: 'ad', ts: at + 200, latency_ms: Math.round(150 + 300 * random()) });
        events.push({ ...base, type: 'start', ts: at + 300, startup_ms: Math.round(500 + 900 * random()) });
        if (random() < 0.08) events.push({ ...base, type: 'rebuffer', ts: at + 20_000 });
      }
    }
    const result = await client.vodStats.ingest(events as Partial<PlaybackEventInput>[]);
    assert.equal(result.accepted, events.length);
    await page.setViewportSize({ width: 1280, height: 1400 });
    await page.evaluate('location.hash = "#overview"');
    // A fresh page: the top assets in the server's order (no sort or filter left from the tests above).
    await page.reload();
    await page.click('#overview-history button[data-range="1h"]');
    await chartsShow('overview-history', '1h', await historyPoints('1h'));
    await page.waitForSelector('#top-assets tr[data-key="movie-01"]', WAIT);
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    await page.screenshot({ path: join(artifacts, 'dashboard-readme.png') });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test('signing out forgets the key; the page logged no errors', async () => {
    await page.click('#signout');
    await page.waitForSelector('#signin', WAIT);
    assert.deepEqual(await storageSizes(page), [0, 0], 'the key and the history range are forgotten');
    assert.deepEqual(consoleErrors, []);
  });
});
