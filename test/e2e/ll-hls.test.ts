import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';
import { parse, types } from 'hls-parser';
import { LIVE_PART_TARGET_S } from '../../src/modules/managed-slicers/live-profiles.js';
import { systemClock } from '../../src/platform/clock.js';
import { liveDir } from '../../src/platform/media/media-layout.js';
import { mediaRootOf } from '../../src/platform/media/media-root.js';
import { browserSkip, CHROMIUM, hlsPlayerSite, missingTools, playerArgs } from '../helpers/browser.js';
import { eventually } from '../helpers/eventually.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { portBlock } from '../helpers/ports.js';

/**
 * Issue 29, acceptance 2: an LL-HLS live slicer (the default) plays in stock hls.js with
 * `lowLatencyMode`; its playlist passes hls-parser with the LL-HLS tags; a blocking reload for the
 * next part answers once that part exists, not before; a plain ffmpeg client plays the same playlist.
 */
const missing = missingTools(['/usr/bin/ffmpeg']);
const skip = browserSkip(['/usr/bin/ffmpeg']);
const run = promisify(execFile);
// Ingest ports: a free block of the test port window (test/helpers/ports.ts, PLAYLINE_TEST_PORT_BASE),
// below the kernel's ephemeral range, so no client socket of another test holds them.
const PORT_BASE = await portBlock(10);

describe('LL-HLS live slicer: hls.js lowLatencyMode, hls-parser, blocking reload, ffmpeg', { skip, timeout: 180_000 }, () => {
  let t: TestApp;
  let base = '';
  let browser: Browser;
  let site: { url: string; server: Server };
  let encoder: ChildProcess | undefined;
  let slicerId = '';
  let dir = '';

  before(async () => {
    assert.deepEqual(missing, [], 'PLAYLINE_REQUIRE_SERVICES=1 needs Chromium and ffmpeg');
    t = await createTestApp({
      clock: systemClock,
      env: { PLAYLINE_SLICER_PROVISIONER: 'ffmpeg', PLAYLINE_SLICER_PORTS: `${PORT_BASE}-${PORT_BASE + 9}`, PLAYLINE_SLICER_BIND_HOST: '127.0.0.1', PLAYLINE_PUBLIC_HOST: '127.0.0.1', PLAYLINE_REGIONS: 'eu-central-1' },
    });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const [slicer] = await Promise.all([
      t.client.managedSlicers.create({ name: 'LL-HLS', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'passthrough' }),
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: playerArgs }).then((launched) => (browser = launched)),
      hlsPlayerSite().then((started) => (site = started)),
    ]);
    slicerId = slicer.id;
    let ingest: string | null | undefined;
    await eventually(async () => {
      const shown = await t.client.managedSlicers.get(slicer.id);
      ingest = shown.ingest_url;
      return shown.live?.state === 'waiting_for_source' && typeof ingest === 'string';
    }, 'the slicer waits for its source', 60_000);
    encoder = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'quiet', '-re', '-f', 'lavfi', '-i', 'testsrc=size=160x90:rate=25', '-f', 'lavfi', '-i', 'sine=sample_rate=48000',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-pix_fmt', 'yuv420p', '-g', '50', '-c:a', 'aac', '-b:a', '64k', '-f', 'mpegts', ingest as string], { stdio: 'ignore' });
    dir = liveDir(mediaRootOf(t.runtime.config), t.workspace.id, slicer.id);
    await eventually(async () => existsSync(join(dir, 'media_main.m3u8')) && (parse(await readFile(join(dir, 'media_main.m3u8'), 'utf8')) as types.MediaPlaylist).segments.filter((s) => s.uri).length >= 3, 'three segments in the live window', 60_000);
  });

  after(async () => {
    encoder?.kill('SIGKILL');
    await browser?.close();
    site?.server.close();
    await t?.close();
  });

  const liveUrl = () => t.client.playback.url(slicerId, { baseUrl: base, kind: 'event' });
  const variantUrl = async (): Promise<string> => {
    const index = await (await fetch(liveUrl())).text();
    const uri = index.split('\n').find((l) => l.includes('/v/'));
    assert.ok(uri, index);
    return new URL(uri, liveUrl()).href;
  };

  test('the session\'s media playlist passes hls-parser with EXT-X-SERVER-CONTROL, PART-INF, parts, a preload hint and program date-times', async () => {
    const text = await (await fetch(await variantUrl())).text();
    const playlist = parse(text);
    assert.ok(playlist instanceof types.MediaPlaylist, text);
    assert.equal(playlist.lowLatencyCompatibility?.canBlockReload, true);
    assert.equal(playlist.partTargetDuration, LIVE_PART_TARGET_S);
    assert.ok((playlist.lowLatencyCompatibility?.partHoldBack ?? 0) >= 3 * LIVE_PART_TARGET_S - 1e-9, 'PART-HOLD-BACK of three part targets');
    const complete = playlist.segments.filter((s) => s.uri);
    assert.ok(complete.length >= 3, text);
    for (const s of complete) {
      assert.match(s.uri, /^\.\.\/c\/seg_main_\d+\.m4s$/);
      assert.ok(s.programDateTime instanceof Date && Math.abs(s.programDateTime.getTime() - Date.now()) < 60_000, `${s.uri}: PROGRAM-DATE-TIME from the ingest clock`);
    }
    const parts = playlist.segments.flatMap((s) => s.parts);
    assert.ok(parts.some((p) => !p.hint && /^\.\.\/c\/seg_main_\d+_p\d+\.m4s$/.test(p.uri)), text);
    assert.equal(parts.filter((p) => p.hint).length, 1, `one EXT-X-PRELOAD-HINT: ${text}`);
  });

  test('a blocking reload for the next part answers once that part exists, not before, and lists it', async () => {
    const url = await variantUrl();
    const now = parse(await (await fetch(url)).text()) as types.MediaPlaylist;
    const hint = now.segments.flatMap((s) => s.parts).find((p) => p.hint);
    assert.ok(hint);
    const [, msn, part] = /seg_main_(\d+)_p(\d+)\.m4s$/.exec(hint.uri) as RegExpExecArray;
    // The hinted part may open the next segment instead (a keyframe ends the segment): either is the next part.
    const next = [`seg_main_${msn}_p${part}.m4s`, `seg_main_${Number(msn) + 1}_p0.m4s`];
    const asked = Date.now();
    const answer = fetch(`${url}${url.includes('?') ? '&' : '?'}_HLS_msn=${msn}&_HLS_part=${part}`).then(async (r) => ({ status: r.status, text: await r.text(), at: Date.now() }));
    const existed = next.some((f) => existsSync(join(dir, f)));
    const got = await answer;
    assert.equal(got.status, 200, got.text);
    assert.ok(next.some((f) => got.text.includes(`../c/${f}`)), `the answer lists the part asked for: ${got.text}`);
    assert.ok(next.some((f) => existsSync(join(dir, f))), 'the part exists when the answer comes');
    if (!existed) assert.ok(got.at - asked >= 20, `held until the part was written (${got.at - asked} ms)`);
  });

  test('hls.js with lowLatencyMode plays it past 4 s, loading parts and blocking reloads, without a fatal error', async () => {
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(base)) requests.push(r.url());
    });
    await page.goto(site.url);
    await page.evaluate(`window.play(${JSON.stringify(liveUrl())}, { lowLatencyMode: true })`);
    await page.waitForFunction('document.getElementById("video").currentTime > 4', undefined, { timeout: 60_000 }).catch(async (error: Error) => {
      const state = await page.evaluate('({ errors: window.errors, t: document.getElementById("video").currentTime, buffered: Array.from({ length: document.getElementById("video").buffered.length }, (_, i) => [document.getElementById("video").buffered.start(i), document.getElementById("video").buffered.end(i)]) })');
      throw new Error(`${error.message}: ${JSON.stringify(state)}; requests: ${requests.slice(-30).map((r) => r.replace(/\/s\/[^/]+\//, '/s/…/')).join(' ')}`);
    });
    assert.deepEqual(await page.evaluate('window.errors.filter((e) => e.fatal)'), []);
    assert.ok(requests.some((r) => /\/v\/media_main\.m3u8\?.*_HLS_msn=\d+/.test(r)), `blocking reloads: ${requests.filter((r) => r.includes('.m3u8')).slice(0, 5).join(' ')}`);
    assert.ok(requests.some((r) => /\/c\/seg_main_\d+_p\d+\.m4s$/.test(r)), 'parts are loaded');
    // hls.js reads EXT-X-PROGRAM-DATE-TIME: the date of the frame it shows.
    assert.equal(await page.evaluate('window.hls.playingDate instanceof Date && window.hls.playingDate.getTime() > 0'), true);
    await page.close();
  });

  test('a plain ffmpeg client plays the same playlist (3 s, no error line)', async () => {
    const { stderr } = await run('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-xerror', '-i', liveUrl(), '-t', '3', '-f', 'null', '-']).catch((error: { stderr?: string; message: string }) => ({ stderr: error.stderr || error.message }));
    assert.deepEqual(stderr.split('\n').filter((l) => l.trim() !== ''), []);
  });
});
