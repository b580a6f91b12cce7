import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { stat } from 'node:fs/promises';
import type { Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import type { AssetView } from '../../src/modules/assets/assets.schema.js';
import { systemClock } from '../../src/platform/clock.js';
import { startLocalReceiver, type LocalReceiver } from '../../src/platform/outbound/testing/local-receiver.js';
import { browserSkip, CHROMIUM, hlsPlayerSite, missingTools, playerArgs } from '../helpers/browser.js';
import { eventually } from '../helpers/eventually.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Issue 30, acceptance 1: an SRT test pattern pushed to a slicer for 12 s, the encoder cut for
 * 5 s and started again for 8 s, then stopped: one recording asset, `ready` within 10 s of the
 * event's end (the reconnect grace passed), 20 s long within 1 s, one discontinuity, played to
 * `ended` by stock hls.js; live.started, live.ended and recording.ready reach a local receiver
 * and verify with the standardwebhooks library.
 */
const missing = missingTools(['/usr/bin/ffmpeg']);
const skip = browserSkip(['/usr/bin/ffmpeg']);
// Apart from the other slicer suites' ranges, below the kernel's ephemeral ports.
const PORT_BASE = 32000 + (process.pid % 70) * 10;
const GRACE_MS = 8000;

describe('a live event recorded into the library: one asset across an encoder cut, ready in seconds, played to the end', { skip, timeout: 240_000 }, () => {
  let t: TestApp;
  let base = '';
  let browser: Browser;
  let site: { url: string; server: Server };
  let receiver: LocalReceiver;
  let encoder: ChildProcess | undefined;

  const push = (ingest: string, seconds: number): Promise<void> => {
    encoder = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'quiet', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25', '-f', 'lavfi', '-i', 'sine=sample_rate=48000',
      '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-pix_fmt', 'yuv420p', '-g', '50', '-c:a', 'aac', '-b:a', '64k', '-f', 'mpegts', ingest], { stdio: 'ignore' });
    const running = encoder;
    return new Promise((resolve) => running.once('exit', () => resolve()));
  };

  before(async () => {
    assert.deepEqual(missing, [], 'PLAYLINE_REQUIRE_SERVICES=1 needs Chromium and ffmpeg');
    t = await createTestApp({
      clock: systemClock,
      env: {
        PLAYLINE_SLICER_PROVISIONER: 'ffmpeg', PLAYLINE_SLICER_PORTS: `${PORT_BASE}-${PORT_BASE + 9}`, PLAYLINE_SLICER_BIND_HOST: '127.0.0.1', PLAYLINE_PUBLIC_HOST: '127.0.0.1',
        PLAYLINE_REGIONS: 'eu-central-1', PLAYLINE_LIVE_RECONNECT_GRACE_MS: String(GRACE_MS), PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32',
      },
    });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    [browser, site, receiver] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: playerArgs }),
      hlsPlayerSite(),
      startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 }),
    ]);
  });

  after(async () => {
    encoder?.kill('SIGKILL');
    await browser?.close();
    site?.server.close();
    await receiver?.close();
    await t?.close();
  });

  test('12 s, a 5 s cut, 8 s: one ready recording within 10 s of the end, 20 ± 1 s, one discontinuity, hls.js plays it to the end; the events signed', async (ctx) => {
    const subscription = await t.client.webhooks.createSubscription({ url: receiver.url, event_types: ['live.started', 'live.ended', 'recording.ready'] });
    const slicer = await t.client.managedSlicers.create({ name: 'Keynote', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'passthrough' });
    assert.equal(slicer.record, true, 'recording is on by default');
    let ingest = '';
    await eventually(async () => {
      const shown = await t.client.managedSlicers.get(slicer.id);
      ingest = shown.ingest_url ?? '';
      return shown.live?.state === 'waiting_for_source' && ingest !== '';
    }, 'the slicer waits for its source', 60_000);
    const state = async () => (await t.client.managedSlicers.get(slicer.id)).live?.state;

    await push(ingest, 12);
    await eventually(async () => (await state()) === 'reconnecting', 'reconnecting during the cut', 15_000);
    assert.deepEqual((await t.client.managedSlicers.get(slicer.id)).live?.recording, { state: 'recording', reason: null }, 'the event is being recorded');
    await new Promise((resolve) => setTimeout(resolve, 5000));
    await push(ingest, 8);
    // The event ends once the grace after the second push passed.
    await eventually(async () => (await state()) === 'waiting_for_source', 'the event ended (the grace passed)', GRACE_MS + 20_000);
    const endedAt = Date.now();
    let recording: AssetView | undefined;
    await eventually(async () => {
      const { page } = await t.client.assets.list({ source_slicer_id: slicer.id });
      recording = page.items.find((a) => a.state === 'ready');
      return recording !== undefined;
    }, 'the recording is ready', 30_000);
    const readyAfterMs = Date.now() - endedAt;
    assert.ok(readyAfterMs <= 10_000, `ready ${readyAfterMs} ms after the end of the event`);
    const asset = recording as NonNullable<typeof recording>;
    assert.equal((await t.client.assets.list({ source_slicer_id: slicer.id })).page.items.length, 1, 'one recording for the event, the cut included');
    assert.equal(asset.source_slicer_id, slicer.id);
    assert.ok(asset.recording_started_at !== null && asset.recording_ended_at !== null && asset.recording_ended_at > asset.recording_started_at);
    assert.ok(Math.abs((asset.duration_s ?? 0) - 20) <= 1, `20 s pushed, ${asset.duration_s} s recorded`);
    ctx.diagnostic(`recording ${asset.id}: ready ${readyAfterMs} ms after the end of the event, ${asset.duration_s} s (20 s pushed)`);
    assert.ok(asset.poster !== null, 'a poster');
    assert.ok((await stat(t.runtime.assets.files.posterPath(t.workspace.id, asset.id))).size > 0, 'the poster frame was taken');

    // It plays through the signed edge like any asset: one discontinuity (the reconnect), to the end in hls.js.
    const url = t.client.playback.url(asset.id, { baseUrl: base });
    const multivariant = await (await fetch(url)).text();
    const variant = multivariant.split('\n').find((l) => l !== '' && !l.startsWith('#')) as string;
    const media = await (await fetch(new URL(variant, url))).text();
    assert.equal(media.match(/#EXT-X-DISCONTINUITY/g)?.length, 1, media);
    assert.match(media, /#EXT-X-ENDLIST/);
    const page = await browser.newPage();
    try {
      await page.goto(site.url);
      await page.evaluate(`window.play(${JSON.stringify(url)})`);
      await page.waitForFunction('document.getElementById("video").currentTime > 0.5', undefined, { timeout: 30_000 });
      // Four times as fast: the same fragments, the discontinuity included, in a quarter of the time.
      await page.evaluate('document.getElementById("video").playbackRate = 4');
      await page.waitForFunction('document.getElementById("video").ended || window.errors.some((e) => e.fatal)', undefined, { timeout: 60_000 });
      const played = (await page.evaluate('({ ended: document.getElementById("video").ended, t: document.getElementById("video").currentTime, errors: window.errors })')) as { ended: boolean; t: number; errors: unknown[] };
      assert.ok(played.ended && played.t > 19, JSON.stringify(played));
    } finally {
      await page.close();
    }
    // Its plays are VOD statistics of the asset.
    await eventually(async () => (await t.client.vodStats.asset(asset.id)).stats.sessions.new >= 1, 'the plays counted in the asset\'s VOD statistics', 15_000);

    // The events: one live.started and one live.ended for the whole event (the cut within the grace), then recording.ready.
    await eventually(() => receiver.count() >= 3, 'three events delivered', 30_000);
    const events = receiver.received.map((got) => {
      const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
      return new Webhook(subscription.signing_secret).verify(got.body, headers) as { type: string; data: Record<string, unknown> };
    });
    assert.deepEqual(events.map((e) => e.type), ['live.started', 'live.ended', 'recording.ready']);
    assert.deepEqual([events[2]?.data.asset_id, events[2]?.data.slicer_id, events[2]?.data.duration_ms], [asset.id, slicer.id, Math.round((asset.duration_s as number) * 1000)]);
  });
});
