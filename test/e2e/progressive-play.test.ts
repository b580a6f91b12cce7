import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { systemClock } from '../../src/platform/clock.js';
import type { AssetState } from '../../src/modules/assets/assets.schema.js';
import { assetStates } from '../../src/modules/assets/assets.schema.js';
import { browserSkip, CHROMIUM, hlsPlayerSite, missingTools, playerArgs } from '../helpers/browser.js';
import { eventually } from '../helpers/eventually.js';
import { encodeOnce } from '../helpers/media.js';
import { pacedFfmpeg } from '../helpers/paced-ffmpeg.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Issue 29, acceptance 1: a 60 s 1080p upload plays in stock hls.js while it is still packaged
 * (`processing`/`playable`), plays on to its end across the switch to `ready`, and its statistics
 * show one session. Kept cheap: a 1080p source at 5 fps with a keyframe every 10 s (fast to make
 * and to decode), packaged at ultrafast to two small renditions, with ffmpeg reading the upload at
 * 4x real time (paced-ffmpeg.ts) so packaging lasts about 15 s whatever the machine's speed, and
 * the player at 2x.
 */
const missing = missingTools(['/usr/bin/ffmpeg']);
const skip = browserSkip(['/usr/bin/ffmpeg']);
const SECONDS = 60;

describe('progressive VOD in hls.js: playing while packaged, on to the end once ready', { skip, timeout: 180_000 }, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'playline-progressive-e2e-'));
  let t: TestApp;
  let base = '';
  let browser: Browser;
  let site: { url: string; server: Server };
  let source = '';

  before(async () => {
    assert.deepEqual(missing, [], 'PLAYLINE_REQUIRE_SERVICES=1 needs Chromium and ffmpeg');
    const ffmpeg = await pacedFfmpeg(scratch, 4);
    t = await createTestApp({
      clock: systemClock,
      env: { PLAYLINE_PACKAGING_LADDER: '360p,180p', PLAYLINE_PACKAGING_PRESET: 'ultrafast', PLAYLINE_FFMPEG_PATH: ffmpeg },
    });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    [source] = await Promise.all([
      encodeOnce([
        '-hide_banner', '-v', 'error', '-f', 'lavfi', '-i', `testsrc2=size=1920x1080:rate=5:duration=${SECONDS}`,
        '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${SECONDS}`,
        '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '64k',
      ], join(scratch, 'source-1080p.mp4')),
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: playerArgs }).then((launched) => (browser = launched)),
      hlsPlayerSite({ playbackRate: 2 }).then((started) => (site = started)),
    ]);
  });

  after(async () => {
    await browser?.close();
    site?.server.close();
    await t?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('plays from the first segments while processing/playable, continues across the switch to ready to the end, one session in the statistics', async (ctx) => {
    const uploaded = await t.client.assets.upload(source, { title: '60 s 1080p' });
    // Every state the asset shows, in the order seen (looked at every 100 ms until ready).
    const seen: AssetState[] = [uploaded.state];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const { state } = await t.client.assets.get(uploaded.id);
        if (seen.at(-1) !== state) seen.push(state);
        if (state === 'ready' || state === 'failed') return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    const playable = await t.client.assets.waitUntilPackaged(uploaded.id, { until: 'playable', intervalMs: 100 });
    assert.equal(playable.state, 'playable', JSON.stringify(playable));
    assert.ok(playable.duration_s !== null && playable.duration_s > 0 && playable.duration_s < SECONDS, `packaged so far: ${playable.duration_s}`);

    const page = await browser.newPage();
    // The media playlists the player got, in order: growing EVENT ones, then the VOD one.
    const playlists: string[] = [];
    page.on('response', (response) => {
      if (!/\/v\/[^/]+\.m3u8/.test(response.url())) return;
      void response.text().then((body) => playlists.push(body), () => undefined);
    });
    try {
      await page.goto(site.url);
      await page.evaluate(`window.play(${JSON.stringify(t.client.playback.url(uploaded.id, { baseUrl: base, params: [['pbs', 'progressive-e2e-1']] }))})`);
      await page.waitForFunction('document.getElementById("video").currentTime > 0 || window.errors.some((e) => e.fatal)', undefined, { timeout: 60_000 });
      const stateWhenPlaying = (await t.client.assets.get(uploaded.id)).state;
      assert.ok(stateWhenPlaying === 'processing' || stateWhenPlaying === 'playable', `playing while still packaged (the asset was ${stateWhenPlaying})`);

      await page.waitForFunction('document.getElementById("video").ended || window.errors.some((e) => e.fatal)', undefined, { timeout: 120_000 }).catch(() => undefined);
      const state = (await page.evaluate(`(() => {
        const video = document.getElementById('video');
        return { ended: video.ended, currentTime: video.currentTime, duration: video.duration, errors: window.errors };
      })()`)) as { ended: boolean; currentTime: number; duration: number; errors: Array<{ fatal: boolean; details: string }> };
      assert.deepEqual(state.errors.filter((e) => e.fatal), [], JSON.stringify(state));
      assert.ok(state.ended, `played to the end: ${JSON.stringify(state)}`);
      assert.ok(Math.abs(state.currentTime - SECONDS) < 1, `to the last second: ${JSON.stringify(state)}`);
    } finally {
      await page.close();
    }
    watching = false;
    await watcher;

    // The states in their order, each at most once: processing (if the look caught it), playable, ready.
    const order = seen.map((s) => assetStates.indexOf(s));
    assert.ok(order.every((o, i) => i === 0 || o > (order[i - 1] ?? -1)), `states in order: ${seen.join(' -> ')}`);
    assert.ok(seen.includes('playable') && seen.at(-1) === 'ready', `states seen: ${seen.join(' -> ')}`);
    ctx.diagnostic(`states seen: ${seen.join(' -> ')}; playable at ${playable.duration_s} s packaged; media playlists served: ${playlists.length}`);
    const ready = await t.client.assets.get(uploaded.id);
    assert.ok(Math.abs((ready.duration_s ?? 0) - SECONDS) < 0.5, `ready with the whole duration: ${ready.duration_s}`);

    // The player crossed the switch: EVENT playlists while packaged, then the VOD one, same segments.
    assert.ok(playlists.some((p) => p.includes('#EXT-X-PLAYLIST-TYPE:EVENT') && !p.includes('#EXT-X-ENDLIST')), 'an EVENT playlist while packaged');
    const last = playlists.at(-1) ?? '';
    assert.ok(last.includes('#EXT-X-PLAYLIST-TYPE:VOD') && last.includes('#EXT-X-ENDLIST'), `the VOD playlist once ready: ${last.slice(0, 300)}`);
    const segmentsOf = (p: string) => p.split('\n').filter((l) => l.endsWith('.m4s'));
    const firstEvent = playlists.find((p) => p.includes('#EXT-X-PLAYLIST-TYPE:EVENT')) ?? '';
    assert.deepEqual(segmentsOf(last).slice(0, segmentsOf(firstEvent).length), segmentsOf(firstEvent), 'the same segment URLs before and after');

    await t.runtime.playbackEdge.events.flush();
    await eventually(async () => (await t.client.vodStats.asset(uploaded.id).catch(() => undefined))?.stats.sessions.new === 1, 'the session in the statistics');
    const { stats } = await t.client.vodStats.asset(uploaded.id);
    assert.deepEqual([stats.sessions.requests, stats.sessions.manifest, stats.sessions.new], [1, 1, 1]);
    assert.deepEqual(stats.errors, {});
  });
});
