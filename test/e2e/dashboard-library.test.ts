import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { PlaylineClient } from '../../src/client/index.js';
import { startLocalReceiver } from '../../src/platform/outbound/testing/local-receiver.js';
import type { ManagedSlicerTaskView, ManagedSlicerView } from '../../src/modules/managed-slicers/managed-slicers.schema.js';
import { artifactsDir, browserSkip, desktopBrowser, missingTools } from '../helpers/browser.js';
import { eventually } from '../helpers/eventually.js';
import { makeClip } from '../helpers/media.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

/**
 * The dashboard's Library view and the slicers' live preview in Chromium against the real server
 * process with real ffmpeg: a clip uploaded from the page (progress bar) is packaged to `ready`
 * (poster, duration, rendition) and plays in the page; a failed asset shows why and is deleted
 * with a second click; the asset quota's 409 shows its detail; a real slicer fed an SRT test
 * pattern is previewed live with its input bit rate. Both views at 390 and 1280 px. Skips without
 * Chromium or ffmpeg unless PLAYLINE_REQUIRE_SERVICES=1. Screenshots go to test-artifacts/.
 */
const tools = ['/usr/bin/ffmpeg', '/usr/bin/ffprobe'];
const missing = missingTools(tools);
const skip = browserSkip(tools);
const artifacts = artifactsDir();
const WAIT = { timeout: 60_000 };
// Slicer ports of this file's own (29000-31990): below the kernel's ephemeral range and apart from the other live suites.
const PORT_BASE = 29000 + (process.pid % 300) * 10;

/** The value `read` gives once `good` accepts it (read every 200 ms: each read is a round trip to the browser). */
async function until<T>(read: () => Promise<T>, good: (value: T) => boolean, what: string, deadlineMs = 30_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (good(last)) return last;
    if (Date.now() >= deadline) throw new Error(`never within ${deadlineMs} ms: ${what} (last: ${JSON.stringify(last)})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('dashboard Library view and live slicer preview in Chromium', { skip, timeout: 300_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-dashboard-library-'));
  const profile = mkdtempSync(join(tmpdir(), 'playline-chromium-'));
  const scratch = mkdtempSync(join(tmpdir(), 'playline-library-media-'));
  let server: ServerProcess;
  let context: BrowserContext;
  let page: Page;
  let client: PlaylineClient;
  let clip = '';
  let assetId = '';
  const pushers: ChildProcess[] = [];
  let liveSlicerId = '';
  const pageErrors: string[] = [];

  const currentTime = (selector: string) => page.$eval(selector, (video) => (video as unknown as { currentTime: number }).currentTime);
  const row = (id: string) => `#library-assets tr[data-key="${id}"]`;
  /** The body of the page's next `POST /api/v4/assets` answer (the upload the page makes). */
  const nextUpload = () => page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/v4/assets', WAIT);

  before(async () => {
    assert.deepEqual(missing, [], 'PLAYLINE_REQUIRE_SERVICES=1 needs Chromium, ffmpeg and ffprobe');
    await Promise.all([
      startServerProcess({
        PLAYLINE_DATA_DIR: dataDir,
        // Two assets at most: the third upload shows the quota's refusal.
        PLAYLINE_QUOTA_ASSETS: '2',
        // 1 MiB per upload: a bigger file is refused from its declared length, before its body is read.
        PLAYLINE_MAX_UPLOAD_BYTES: String(1024 * 1024),
        PLAYLINE_PACKAGING_LADDER: '144p',
        PLAYLINE_PACKAGING_PRESET: 'ultrafast',
        PLAYLINE_SLICER_PROVISIONER: 'ffmpeg',
        PLAYLINE_SLICER_PORTS: `${PORT_BASE}-${PORT_BASE + 9}`,
        PLAYLINE_SLICER_BIND_HOST: '127.0.0.1',
        // The live event ends 1 s after its encoder stops: its recording is listed soon after.
        PLAYLINE_LIVE_RECONNECT_GRACE_MS: '1000',
        // The webhook receiver is on loopback.
        PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32',
      }).then((started) => (server = started)),
      desktopBrowser(profile).then((launched) => (context = launched)),
      makeClip(scratch, 'clip.mp4', { seconds: 4, width: 320, height: 180 }).then((path) => (clip = path)),
    ]);
    const { owner, key } = bootstrapCredentials(server);
    client = new PlaylineClient({ baseUrl: server.url, owner, apiKey: key });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (err) => pageErrors.push(`pageerror: ${err.message}`));
    // Refused API calls log "Failed to load resource" by design; anything else (a CSP violation, an exception) is a bug.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) pageErrors.push(m.text());
    });
    await page.goto(`${server.url}/dashboard`);
    await page.fill('#signin-owner', owner);
    await page.fill('#signin-key', key);
    await page.click('#signin-submit');
    await page.waitForSelector('#workspace', WAIT);
  });

  after(async () => {
    await Promise.all(pushers.map((child) => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    })));
    await context?.close();
    await server?.stop();
    for (const dir of [dataDir, profile, scratch]) rmSync(dir, { recursive: true, force: true });
  });

  test('an upload from the Library view shows its progress, is packaged to ready with poster, duration and rendition, and plays in the page', async () => {
    await page.click('a[href="#library"]');
    await page.waitForSelector('#view-library .empty:has-text("No assets yet")', WAIT);
    // Every value the progress bar takes, from the page's own writes.
    await page.evaluate(`(() => {
      const bar = document.getElementById('library-upload-progress');
      window.progressSeen = [];
      new MutationObserver(() => window.progressSeen.push(bar.getAttribute('value') + '/' + bar.getAttribute('max'))).observe(bar, { attributes: true, attributeFilter: ['value', 'max'] });
    })()`);
    await page.setInputFiles('#library-file', clip);
    await page.fill('#library-title', 'Dashboard upload');
    // Loopback sends 100 KiB at once: Chromium's own network throttling (about 1.5 s for the clip) lets the bar move.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 64 * 1024 });
    const answer = nextUpload();
    await page.click('#library-upload');
    const response = await answer;
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await cdp.detach();
    assert.equal(response.status(), 201);
    // (The body of the page's XHR is not kept by the inspector: the id comes from Location.)
    assetId = String(/^\/api\/v4\/assets\/([0-9a-f]{32})$/.exec(String(response.headers().location))?.[1]);
    assert.equal((await client.assets.get(assetId)).title, 'Dashboard upload');
    assert.ok(!response.request().url().includes('apiKey') && response.request().url().includes('sig='), 'the upload is signed like the API client signs');

    await page.waitForSelector('#library-upload-status:has-text("Uploaded Dashboard upload")', WAIT);
    const size = statSync(clip).size;
    const seen = (await page.evaluate('window.progressSeen')) as string[];
    assert.ok(seen.length > 0, 'the progress bar moved');
    assert.equal(seen.at(-1), `${size}/${size}`, `the bar ends full at the file's size: ${seen.join(' ')}`);
    const sent = seen.map((s) => Number(s.split('/')[0]));
    assert.deepEqual(sent, [...sent].sort((a, b) => a - b), 'the bar only moves forward');
    assert.ok(sent.some((n) => n > 0 && n < size), `the bar showed the upload part-way: ${seen.join(' ')}`);

    // Packaging: the row shows the API's state (and its progress while packaging), then ready.
    const states = new Set<string>();
    await until(async () => {
      const state = await page.locator(`${row(assetId)} td.asset-state`).textContent({ timeout: 1000 }).catch(() => null);
      if (state) states.add(state);
      return state;
    }, (state) => state === 'ready', 'the uploaded asset is ready in the list', 60_000);
    assert.ok([...states].every((s) => ['uploaded', 'processing', 'playable', 'ready'].includes(s)), [...states].join(', '));
    const cells = await page.locator(`${row(assetId)} td`).allTextContents();
    // Poster, title, its actions beside it, state, packaging, duration (m:ss, as everywhere), renditions.
    assert.equal(cells[1], 'Dashboard upload');
    assert.equal(cells[4], 'done');
    assert.equal(cells[5], '0:04');
    assert.equal(cells[6], '144p');
    // The poster is signed by the page and really loads (an <img> of the API's poster path).
    await until(
      () => page.$eval(`${row(assetId)} img.poster`, (img) => (img as unknown as { complete: boolean; naturalWidth: number }).naturalWidth).catch(() => 0),
      (width) => width > 0,
      'the poster image loads',
    );
    const posterSrc = await page.$eval(`${row(assetId)} img.poster`, (img) => img.getAttribute('src'));
    assert.match(String(posterSrc), new RegExp(`^/api/v4/assets/${assetId}/poster\\.jpg\\?msg=.+&sig=[0-9a-f]{64}$`));

    await page.click(`${row(assetId)} button:text-is("Play")`);
    await page.waitForSelector('#library-player-status:has-text("Playing: 144p")', WAIT);
    await until(() => currentTime('#library-player-video'), (t) => t > 1, 'the asset plays in the Library view');
    assert.match(String(await page.$eval('#library-player-video', (v) => v.getAttribute('data-playback-url'))), new RegExp(`^/play/${assetId}\\.m3u8\\?tc=1&.*ct=a&cid=${assetId}&`));
    await page.screenshot({ path: join(artifacts, 'dashboard-library-playing.png'), fullPage: true });
  });

  test('a file that is not media fails with its reason, the quota\'s 409 shows its detail, and delete takes a second click', async () => {
    // A hostile name (the file's name is the title when none is typed): shown as text, never as markup.
    const hostile = '<img src=x onerror="document.title=\'pwned\'">.mp4';
    const notMedia = join(scratch, hostile);
    writeFileSync(notMedia, 'these are not video frames\n'.repeat(100));
    const titleBefore = await page.title();
    await page.setInputFiles('#library-file', notMedia);
    const answer = nextUpload();
    await page.click('#library-upload');
    const failed = { id: String(/([0-9a-f]{32})$/.exec(String((await answer).headers().location))?.[1]) };
    await page.waitForSelector(`${row(failed.id)} td.asset-state:text-is("failed")`, WAIT);
    assert.equal(await page.locator(`${row(failed.id)} td`).nth(1).textContent(), hostile);
    assert.equal(await page.locator(`${row(failed.id)} img`).count(), 0, 'the name made no element');
    assert.equal(String(await page.textContent('#library-upload-status')).slice(0, `Uploaded ${hostile} (2.6 KiB)`.length), `Uploaded ${hostile} (2.6 KiB)`);
    assert.equal(await page.title(), titleBefore);
    assert.equal((await client.assets.get(failed.id)).title, hostile, 'the title went to the API as it was');
    // The failure's reason shows in its row; a failed asset cannot be played.
    assert.ok(String(await page.locator(`${row(failed.id)} td.wrap`).last().textContent()).length > 10, 'the failure reason shows');
    assert.equal(await page.locator(`${row(failed.id)} button:text-is("Play")`).isDisabled(), true, 'a failed asset cannot be played');

    // A file over PLAYLINE_MAX_UPLOAD_BYTES: the server answers 413 from the declared length and closes
    // the connection unread; the page still shows the server's answer, not a network error.
    const big = join(scratch, 'big.mp4');
    writeFileSync(big, Buffer.alloc(8 * 1024 * 1024));
    await page.setInputFiles('#library-file', big);
    await page.click('#library-upload');
    await page.waitForSelector('#library-upload-problem:not([hidden])', WAIT);
    assert.match(String(await page.textContent('#library-upload-problem')), /^Not uploaded \(big\.mp4\): An upload may be at most 1048576 bytes \(PLAYLINE_MAX_UPLOAD_BYTES\) \(payload_too_large, HTTP 413/);
    await page.waitForSelector('#library-upload:not([disabled])', WAIT);

    // The workspace holds two assets: a third upload is refused, and the page says why.
    await page.setInputFiles('#library-file', clip);
    const refused = nextUpload();
    await page.click('#library-upload');
    assert.equal((await refused).status(), 409);
    await page.waitForSelector('#library-upload-problem:not([hidden])', WAIT);
    const problem = String(await page.textContent('#library-upload-problem'));
    assert.match(problem, /^Not uploaded \(clip\.mp4\): .+ \(quota_exceeded, HTTP 409(; request id [^)]+)?\)$/);
    assert.equal(await page.isHidden('#library-upload-progress'), true, 'no progress is left showing after a refusal');
    await page.screenshot({ path: join(artifacts, 'dashboard-library-quota.png'), fullPage: true });

    const del = page.locator(`${row(failed.id)} button`).nth(1);
    await del.click();
    await page.waitForSelector(`${row(failed.id)} button.confirm:text-is("Confirm delete")`, WAIT);
    assert.equal((await client.assets.list()).page.items.length, 2, 'a first click deletes nothing');
    await del.click();
    await page.waitForSelector(row(failed.id), { state: 'detached', ...WAIT });
    assert.deepEqual((await client.assets.list()).page.items.map((a) => a.id), [assetId]);
    await page.waitForSelector('#library-summary:text-is("1 asset, newest first.")', WAIT);
  });

  test('a live slicer\'s preview plays its live output in the page, with its state and input bit rate', async () => {
    const slicer = await client.managedSlicers.create({ name: 'Preview e2e', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'passthrough' });
    liveSlicerId = slicer.id;
    let task: ManagedSlicerTaskView | undefined;
    await eventually(async () => {
      task = await client.managedSlicers.getTask(slicer.task.id);
      return task.state === 'COMPLETED' || task.state === 'FAILED';
    }, 'the slicer is created', 60_000);
    assert.equal(task?.state, 'COMPLETED', JSON.stringify(task));
    let found: ManagedSlicerView | undefined;
    await eventually(async () => {
      found = await client.managedSlicers.get(slicer.id);
      return found.live?.state === 'waiting_for_source' && found.ingest_url !== null;
    }, 'the slicer waits for its source', 60_000);
    // A low-res test pattern and tone over SRT, as an encoder would push (H.264 4:2:0, about 360 kbit/s).
    pushers.push(spawn('ffmpeg', [
      '-hide_banner', '-nostdin', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25', '-f', 'lavfi', '-i', 'sine',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '50', '-b:v', '300k', '-maxrate', '300k', '-bufsize', '300k', '-c:a', 'aac', '-b:a', '64k', '-f', 'mpegts', found?.ingest_url as string,
    ], { stdio: 'ignore' }));

    await page.click('a[href="#slicers"]');
    const slicerRow = `#slicers tr[data-key="${slicer.id}"]`;
    const previewButton = page.locator(`${slicerRow} button:text-is("Preview")`);
    await page.waitForSelector(`${slicerRow} td.badge:text-is("live")`, WAIT);
    await until(() => previewButton.isDisabled(), (disabled) => !disabled, 'Preview is offered once the slicer is live', 20_000);
    await previewButton.click();
    await page.waitForSelector('#slicer-preview:not([hidden])', WAIT);
    assert.equal(await page.textContent('#slicer-preview-name'), 'Preview e2e');
    await until(() => currentTime('#slicer-preview-video'), (t) => t > 2, 'the live preview plays', 60_000).catch(async (err: Error) => {
      throw new Error(`${err.message}; the player said: ${await page.textContent('#slicer-preview-status')}`);
    });
    assert.match(String(await page.$eval('#slicer-preview-video', (v) => v.getAttribute('data-playback-url'))), new RegExp(`^/play/event/${slicer.id}\\.m3u8\\?tc=1&.*ct=e&cid=${slicer.id}&`));
    assert.match(String(await page.textContent('#slicer-preview-status')), /^Playing live: /);
    const line = await until(async () => String(await page.textContent('#slicer-preview-live')), (text) => /^live · input \d+ kbit\/s, last frame \d+ s ago$/.test(text), 'the preview shows the live state and input', 20_000);
    const kbps = Number(/input (\d+) kbit/.exec(line)?.[1]);
    assert.ok(kbps >= 150 && kbps <= 900, `the input bit rate of a ~360 kbit/s push: ${line}`);
    await page.waitForSelector(`${slicerRow} button:text-is("Stop preview")`, WAIT);
    await page.screenshot({ path: join(artifacts, 'dashboard-slicer-preview.png'), fullPage: true });
  });

  test('the Library and Slicers views at 390 px (no page scroll sideways) and 1280 px (tables within their card)', async () => {
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      for (const view of [{ hash: '#library', ready: `${row(assetId)} img.poster` }, { hash: '#slicers', ready: '#slicers tbody tr' }]) {
        await page.click(`a[href="${view.hash}"]`);
        await page.waitForSelector(view.ready, WAIT);
        if (view.hash === '#slicers') {
          // The preview open and playing (leaving the view closed it).
          await page.click('#slicers tbody tr button:text-is("Preview")');
          await page.waitForSelector('#slicer-preview-status:has-text("Playing live")', WAIT);
        }
        const [scrollWidth, innerWidth] = (await page.evaluate('[document.documentElement.scrollWidth, innerWidth]')) as number[];
        assert.ok((scrollWidth as number) <= (innerWidth as number), `${view.hash} at ${width} px: page ${scrollWidth} px wide in a ${innerWidth} px window`);
        if (width === 1280) {
          const overflowing = (await page.evaluate(`[...document.querySelectorAll('.view:not([hidden]) .table-scroll')]
            .filter((box) => box.scrollWidth > box.clientWidth + 1).map((box) => box.querySelector('table')?.getAttribute('aria-label'))`)) as string[];
          assert.deepEqual(overflowing, [], `${view.hash} at 1280 px: tables wider than their card`);
        }
        await page.screenshot({ path: join(artifacts, `dashboard-${view.hash.slice(1)}-view-${width}.png`), fullPage: true });
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    assert.deepEqual(pageErrors, []);
  });
  test('Webhooks view: an endpoint subscribed (its secret shown once), then the live event ends: its recording is listed with its slicer and plays, and the deliveries show; at 390 and 1280 px', async () => {
    const receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
    try {
      await page.click('a[href="#webhooks"]');
      await page.fill('#webhook-url', receiver.url);
      await page.fill('#webhook-description', 'ops');
      await page.click('#webhook-create');
      await page.waitForSelector('#webhook-secret-box:not([hidden])', WAIT);
      assert.match(String(await page.textContent('#webhook-secret')), /^whsec_/);
      await page.waitForSelector(`#webhook-subscriptions tbody tr:has-text("${receiver.url}")`, WAIT);
      // Away and back: the secret is not on the page any more.
      await page.click('a[href="#library"]');
      await page.click('a[href="#webhooks"]');
      assert.equal(await page.isHidden('#webhook-secret-box'), true);
      assert.doesNotMatch(String(await page.textContent('#view-webhooks')), /whsec_/);

      // The encoder stops: 1 s later the event ends and its recording becomes an asset.
      for (const pusher of pushers) pusher.kill('SIGKILL');
      await page.click('a[href="#slicers"]');
      const slicerRow = `#slicers tr[data-key="${liveSlicerId}"]`;
      await page.click(`${slicerRow} button:text-is("Recordings")`);
      await page.waitForSelector('#slicer-recordings:not([hidden])', WAIT);
      assert.equal(await page.textContent('#slicer-recordings-name'), 'Preview e2e');
      const recording = '#slicer-recordings-table tbody tr';
      await page.waitForSelector(`${recording} td.badge:text-is("ready")`, WAIT);
      assert.match(String(await page.textContent(`${recording} td:first-child`)), /^Preview e2e \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
      await page.click(`${recording} button:text-is("Play")`);
      await until(() => currentTime('#slicer-recording-player-video'), (t) => t > 1, 'the recording plays in the page', 60_000);
      assert.equal((await client.assets.list({ source_slicer_id: liveSlicerId })).page.items.length, 1);

      // Its events reached the endpoint, and the view lists the deliveries.
      await eventually(() => receiver.received.some((r) => r.body.includes('"recording.ready"')), 'recording.ready delivered', 30_000);
      await page.click('a[href="#webhooks"]');
      await page.waitForSelector('#webhook-attempts tbody tr td.badge:has-text("delivered")', WAIT);
      // Each delivery names its event, and Payload shows what was sent.
      const readyRow = '#webhook-attempts tbody tr:has(td:text-is("recording.ready"))';
      await page.waitForSelector(readyRow, WAIT);
      await page.click(`${readyRow} button:text-is("Payload")`);
      await page.waitForSelector('#webhook-payload-box:not([hidden])', WAIT);
      assert.match(String(await page.textContent('#webhook-payload-title')), /^recording\.ready at /);
      assert.equal((JSON.parse(String(await page.textContent('#webhook-payload'))) as { slicer_id?: string }).slicer_id, liveSlicerId);
      // Rotate secret: a second click, then the new secret shown once.
      const subscriptionRow = `#webhook-subscriptions tbody tr:has-text("${receiver.url}")`;
      await page.click(`${subscriptionRow} button:text-is("Rotate secret")`);
      await page.click(`${subscriptionRow} button:text-is("Confirm rotate")`);
      await page.waitForSelector('#webhook-secret-box:not([hidden])', WAIT);
      assert.match(String(await page.textContent('#webhook-secret')), /^whsec_/);

      for (const width of [390, 1280]) {
        await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
        for (const view of ['#webhooks', '#slicers']) {
          await page.click(`a[href="${view}"]`);
          if (view === '#slicers') {
            await page.click(`${slicerRow} button:text-is("Recordings")`);
            await page.waitForSelector(`${recording} td.badge:text-is("ready")`, WAIT);
          } else {
            await page.waitForSelector('#webhook-subscriptions tbody tr', WAIT);
          }
          const [scrollWidth, innerWidth] = (await page.evaluate('[document.documentElement.scrollWidth, innerWidth]')) as number[];
          assert.ok((scrollWidth as number) <= (innerWidth as number), `${view} at ${width} px: page ${scrollWidth} px wide in a ${innerWidth} px window`);
          if (width === 1280) {
            const overflowing = (await page.evaluate(`[...document.querySelectorAll('.view:not([hidden]) .table-scroll')]
              .filter((box) => box.scrollWidth > box.clientWidth + 1).map((box) => box.querySelector('table')?.getAttribute('aria-label'))`)) as string[];
            assert.deepEqual(overflowing, [], `${view} at 1280 px: tables wider than their card`);
          }
          await page.screenshot({ path: join(artifacts, `dashboard-${view.slice(1)}-recordings-webhooks-${width}.png`), fullPage: true });
        }
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      assert.deepEqual(pageErrors, []);
    } finally {
      await receiver.close();
    }
  });
});
