import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { parse, type types } from 'hls-parser';
import { systemClock } from '../../src/platform/clock.js';
import { liveDir } from '../../src/platform/media/media-layout.js';
import { mediaRootOf } from '../../src/platform/media/media-root.js';
import { browserSkip, CHROMIUM, hlsPlayerSite, missingTools, playerArgs } from '../helpers/browser.js';
import { eventually } from '../helpers/eventually.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { portBlock } from '../helpers/ports.js';

/**
 * Issue 30 parts 2 and 3 with real media: an SRT test pattern pushed for ~20 s, cut for 3 s, pushed
 * again: the live playlist goes on after one EXT-X-DISCONTINUITY (the same event: `reconnecting`
 * during the gap), a watching hls.js player keeps playing across the gap, and seeking back 15 s in
 * the DVR window plays.
 */
const missing = missingTools(['/usr/bin/ffmpeg']);
const skip = browserSkip(['/usr/bin/ffmpeg']);
// Ingest ports: a free block of the test port window (test/helpers/ports.ts, PLAYLINE_TEST_PORT_BASE),
// below the kernel's ephemeral range, so no client socket of another test holds them.
const PORT_BASE = await portBlock(10);

describe('live DVR window and encoder reconnect: one event, one discontinuity, hls.js plays across the gap and seeks back', { skip, timeout: 180_000 }, () => {
  let t: TestApp;
  let base = '';
  let browser: Browser;
  let site: { url: string; server: Server };
  let encoder: ChildProcess | undefined;
  let slicerId = '';
  let ingest = '';
  let dir = '';
  /** What the player watching across the cut did: `continued`, or why not. */
  let watcher = 'not run';
  /** What the player that joined during the cut did. */
  let gapJoiner = 'not run';

  const push = (seconds: number): Promise<void> => {
    encoder = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'quiet', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25', '-f', 'lavfi', '-i', 'sine=sample_rate=48000',
      '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-pix_fmt', 'yuv420p', '-g', '50', '-c:a', 'aac', '-b:a', '64k', '-f', 'mpegts', ingest], { stdio: 'ignore' });
    const running = encoder;
    return new Promise((resolve) => running.once('exit', () => resolve()));
  };
  const playlist = async () => parse(await readFile(join(dir, 'media_main.m3u8'), 'utf8')) as types.MediaPlaylist;
  const video = (page: Page, expression: string) => page.evaluate(`(() => { const v = document.getElementById("video"); return ${expression}; })()`);

  before(async () => {
    assert.deepEqual(missing, [], 'PLAYLINE_REQUIRE_SERVICES=1 needs Chromium and ffmpeg');
    t = await createTestApp({
      clock: systemClock,
      env: { PLAYLINE_SLICER_PROVISIONER: 'ffmpeg', PLAYLINE_SLICER_PORTS: `${PORT_BASE}-${PORT_BASE + 9}`, PLAYLINE_SLICER_BIND_HOST: '127.0.0.1', PLAYLINE_PUBLIC_HOST: '127.0.0.1', PLAYLINE_REGIONS: 'eu-central-1' },
    });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const [slicer] = await Promise.all([
      t.client.managedSlicers.create({ name: 'DVR', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'passthrough', dvr_window_s: 600 }),
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: playerArgs }).then((launched) => (browser = launched)),
      hlsPlayerSite().then((started) => (site = started)),
    ]);
    slicerId = slicer.id;
    await eventually(async () => {
      const shown = await t.client.managedSlicers.get(slicer.id);
      ingest = shown.ingest_url ?? '';
      return shown.live?.state === 'waiting_for_source' && ingest !== '';
    }, 'the slicer waits for its source', 60_000);
    dir = liveDir(mediaRootOf(t.runtime.config), t.workspace.id, slicer.id);
  });

  after(async () => {
    encoder?.kill('SIGKILL');
    await browser?.close();
    site?.server.close();
    await t?.close();
  });

  test('a 3 s cut: reconnecting, then the same playlist after one discontinuity; a player joining then seeks 15 s back and plays', async () => {
    const first = push(22);
    await eventually(async () => existsSync(join(dir, 'media_main.m3u8')) && (await playlist()).segments.filter((s) => s.uri).length >= 2, 'two segments in the live window', 60_000);
    const page = await browser.newPage();
    await page.goto(site.url);
    const liveUrl = t.client.playback.url(slicerId, { baseUrl: base, kind: 'event' });
    await page.evaluate(`window.play(${JSON.stringify(liveUrl)}, { lowLatencyMode: true })`);
    await page.evaluate('window.reasons = []; window.hls.on("hlsError", (_e, d) => window.reasons.push(String(d.reason || (d.error && d.error.message) || d.details)))');
    await page.waitForFunction('document.getElementById("video").currentTime > 2', undefined, { timeout: 60_000 });
    await first;
    // The encoder is gone: the slicer shows the gap, and the window's run has ended (its last segment closed, no part listed).
    await eventually(async () => (await t.client.managedSlicers.get(slicerId)).live?.state === 'reconnecting', 'live.state reconnecting during the gap', 10_000);
    await eventually(async () => (await playlist()).segments.every((s) => s.uri && s.parts.length === 0), 'the first run\'s window closed', 10_000);
    const before = await playlist();
    const lastBefore = before.segments.at(-1)?.mediaSequenceNumber as number;
    // A player joining during the cut: it finds the first push's window, complete segments only.
    const gapPage = await browser.newPage();
    await gapPage.goto(site.url);
    await gapPage.evaluate(`window.play(${JSON.stringify(liveUrl)}, { lowLatencyMode: true })`);
    await gapPage.evaluate('window.reasons = []; window.hls.on("hlsError", (_e, d) => window.reasons.push(String(d.reason || (d.error && d.error.message) || d.details)))');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const shownAtCut = (await video(page, 'v.currentTime')) as number;
    const gapShownAtCut = (await video(gapPage, 'v.currentTime')) as number;
    const second = push(10);
    await eventually(async () => (await t.client.managedSlicers.get(slicerId)).live?.state === 'live', 'live again', 30_000);
    await eventually(async () => (await playlist()).segments.filter((s) => s.uri && (s.mediaSequenceNumber ?? 0) > lastBefore).length >= 2, 'two segments of the second push', 30_000);

    const p = await playlist();
    assert.equal(p.mediaSequenceBase, before.mediaSequenceBase, 'the same playlist (DVR window of 600 s: nothing left it)');
    assert.equal(p.segments.filter((s) => s.discontinuity).length, 1, 'one discontinuity');
    const msns = p.segments.map((s) => s.mediaSequenceNumber as number);
    assert.deepEqual(msns, msns.map((_, i) => (msns[0] as number) + i), 'the media sequence continues');
    assert.equal(p.segments.find((s) => s.discontinuity)?.mediaSequenceNumber, lastBefore + 1);

    // The player that watched across the gap: checked in the next test.
    watcher = await page
      .waitForFunction(`document.getElementById("video").currentTime > ${shownAtCut + 5}`, undefined, { timeout: 40_000 })
      .then(() => 'continued', async (error: Error) => `${error.message}: ${JSON.stringify(await page.evaluate('({ errors: window.errors, reasons: window.reasons.map((r) => r.slice(0, 400)), t: document.getElementById("video").currentTime })'))}`);

    gapJoiner = await gapPage
      .waitForFunction(`document.getElementById("video").currentTime > ${gapShownAtCut + 5}`, undefined, { timeout: 40_000 })
      .then(() => 'continued', async (error: Error) => `${error.message}: ${JSON.stringify(await gapPage.evaluate('({ errors: window.errors, reasons: window.reasons.map((r) => r.slice(0, 400)), t: document.getElementById("video").currentTime })'))}`);
    await gapPage.close();

    // A player joining now seeks back 15 s in the DVR window, across the discontinuity into the first push.
    const joiner = await browser.newPage();
    await joiner.goto(site.url);
    await joiner.evaluate(`window.play(${JSON.stringify(liveUrl)}, { lowLatencyMode: true })`);
    await joiner.waitForFunction('document.getElementById("video").currentTime > 0.5', undefined, { timeout: 30_000 });
    const now = (await video(joiner, 'v.currentTime')) as number;
    const target = now - 15;
    assert.ok(((await video(joiner, 'v.seekable.start(0)')) as number) <= target, 'the DVR window reaches 15 s back');
    await video(joiner, `(v.currentTime = ${target}, true)`);
    await joiner.waitForFunction(`(() => { const v = document.getElementById("video"); return v.currentTime > ${target + 1} && v.currentTime < ${target + 10} && !v.paused; })()`, undefined, { timeout: 30_000 }).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(await joiner.evaluate('({ errors: window.errors, t: document.getElementById("video").currentTime })'))}`);
    });
    assert.deepEqual(await joiner.evaluate('window.errors.filter((e) => e.fatal)'), []);
    await joiner.close();
    await page.close();
    await second;
  });

  test('the player that watched across the 3 s cut plays on into the second push', () => {
    assert.equal(watcher, 'continued');
  });

  test('a player that joined during the cut plays on into the second push', () => {
    assert.equal(gapJoiner, 'continued');
  });
});
