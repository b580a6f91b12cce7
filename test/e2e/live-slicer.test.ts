import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { PlaylineClient } from '../../src/client/index.js';
import type { ManagedSlicerTaskView, ManagedSlicerView } from '../../src/modules/managed-slicers/managed-slicers.schema.js';
import { liveDir } from '../../src/platform/media/media-layout.js';
import { signPlaybackUrl } from '../../src/modules/playback-edge/playback-token.js';
import { eventually } from '../helpers/eventually.js';
import { exitedWithin, freePort, receiverListening, startReceiver, videoSeconds } from '../helpers/media-receiver.js';
import { artifactsDir, browserSkip, CHROMIUM, hlsPlayerSite, missingTools, playerArgs } from '../helpers/browser.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { portBlock } from '../helpers/ports.js';

/**
 * A real slicer through the real server: a generated test pattern pushed over SRT to the
 * slicer's ingest URL, its live window played by stock hls.js in Chromium through a signed
 * `/play/event/<slicer id>.m3u8`; then RESTART, `kill -9` of the server and DELETE, each
 * followed on the real ffmpeg process. Skips without Chromium or ffmpeg unless
 * PLAYLINE_REQUIRE_SERVICES=1 (CI), where it fails.
 */
const missing = missingTools(['/usr/bin/ffmpeg']);
const skip = browserSkip(['/usr/bin/ffmpeg']);
const artifacts = artifactsDir();
const WAIT = { timeout: 60_000 };
// Ingest ports: a free block of the test port window (test/helpers/ports.ts, PLAYLINE_TEST_PORT_BASE),
// below the kernel's ephemeral range, so no client socket of another test holds them.
const PORT_BASE = await portBlock(10);

/** `pid` runs (and is no zombie). */
const runs = (pid: number): boolean => {
  try {
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** The pid the slicer's process marker names (written by the server for each ffmpeg it starts). */
const markedPid = (dir: string): number | undefined => {
  try {
    return (JSON.parse(readFileSync(join(dir, '.slicer-process.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
};

describe('a real slicer: SRT ingest, live window played in Chromium, syndicated over RTMP, RESTART, kill -9, DELETE', { skip, timeout: 400_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-live-e2e-'));
  const env = {
    PLAYLINE_DATA_DIR: dataDir,
    PLAYLINE_SLICER_PROVISIONER: 'ffmpeg',
    PLAYLINE_SLICER_PORTS: `${PORT_BASE}-${PORT_BASE + 9}`,
    PLAYLINE_SLICER_BIND_HOST: '127.0.0.1',
    // The publishing destination below is a receiver on loopback.
    PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32',
  };
  const servers: ServerProcess[] = [];
  const pushers: ChildProcess[] = [];
  let server: ServerProcess;
  let browser: Browser;
  let site: { url: string; server: Server };
  let owner = '';
  let key = '';
  let client: PlaylineClient;
  let slicer: ManagedSlicerView;
  let outputDir = '';

  const startServer = async () => {
    server = await startServerProcess(env);
    servers.push(server);
    client = new PlaylineClient({ baseUrl: server.url, owner, apiKey: key });
  };

  /** Pushes an endless test pattern and tone over SRT (H.264 4:2:0, as browsers decode it), like an encoder would. */
  const push = (url: string): ChildProcess => {
    const child = spawn('ffmpeg', [
      '-hide_banner', '-nostdin', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25', '-f', 'lavfi', '-i', 'sine',
      // About 360 kbit/s (300 video + 64 audio): the slicer's input bitrate is checked against it.
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '50', '-b:v', '300k', '-maxrate', '300k', '-bufsize', '300k', '-c:a', 'aac', '-b:a', '64k', '-f', 'mpegts', url,
    ], { stdio: 'ignore' });
    pushers.push(child);
    return child;
  };
  const stopPushers = async () => {
    await Promise.all(pushers.splice(0).map((child) => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }
    })));
  };

  const waitForTask = async (id: string): Promise<ManagedSlicerTaskView> => {
    let task: ManagedSlicerTaskView | undefined;
    await eventually(async () => {
      task = await client.managedSlicers.getTask(id);
      return task.state === 'COMPLETED' || task.state === 'FAILED';
    }, `task ${id} finished`, 60_000);
    return task as ManagedSlicerTaskView;
  };
  const waitForLive = async (state: string): Promise<ManagedSlicerView> => {
    let found: ManagedSlicerView | undefined;
    await eventually(async () => {
      found = await client.managedSlicers.get(slicer.id);
      return found.live?.state === state;
    }, `slicer ${slicer.id} ${state} (last: ${JSON.stringify(found?.live)})`, 60_000);
    return found as ManagedSlicerView;
  };

  before(async () => {
    assert.deepEqual(missing, [], 'PLAYLINE_REQUIRE_SERVICES=1 needs Chromium and ffmpeg');
    // The server, the player's site and the browser start side by side (each kept as it comes, for `after`).
    await Promise.all([
      startServerProcess(env).then((started) => {
        server = started;
        servers.push(server);
      }),
      hlsPlayerSite().then((started) => (site = started)),
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: playerArgs }).then((launched) => (browser = launched)),
    ]);
    ({ owner, key } = bootstrapCredentials(server));
    client = new PlaylineClient({ baseUrl: server.url, owner, apiKey: key });
  });

  after(async () => {
    await stopPushers();
    await browser?.close();
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) await s.stop();
    site?.server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('a new slicer listens on its SRT ingest URL; a pushed test pattern makes it live; /play/event/<id>.m3u8 plays in hls.js past 3 s', async () => {
    slicer = await client.managedSlicers.create({ name: 'Live e2e', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'passthrough' });
    const created = await waitForTask(slicer.task.id);
    assert.equal(created.state, 'COMPLETED', JSON.stringify(created));
    const waiting = await waitForLive('waiting_for_source');
    assert.equal(waiting.state, 'running');
    // The slicer's stream key is the SRT passphrase of its ingest URL.
    assert.match(waiting.ingest_url ?? '', new RegExp(`^srt://127\\.0\\.0\\.1:${PORT_BASE}\\?passphrase=[A-Za-z0-9_-]{32}&pbkeylen=16$`));
    outputDir = liveDir(join(dataDir, 'media'), owner, slicer.id);

    push(waiting.ingest_url as string);
    const live = await waitForLive('live');
    assert.ok((live.live?.last_frame_at ?? 0) > 0, JSON.stringify(live.live));
    // The input bitrate is the real one (it read 0 while 250 kbit/s flowed): an encoder sending about 360 kbit/s.
    let kbps = 0;
    await eventually(async () => {
      kbps = (await client.managedSlicers.get(slicer.id)).live?.input_bitrate_kbps ?? 0;
      return kbps >= 180 && kbps <= 900;
    }, `input bitrate near 360 kbit/s (last: ${kbps})`);

    const url = signPlaybackUrl({ baseUrl: server.url, kind: 'event', contentId: slicer.id, owner, key, expiresAt: Math.floor(Date.now() / 1000) + 600, params: [] }, () => randomBytes(8).toString('hex'));
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(server.url)) requests.push(r.url());
    });
    // Live means media arrives; the window is there once its first segment is written.
    await eventually(() => existsSync(join(outputDir, 'index.m3u8')), 'the live window is written');
    await page.goto(site.url);
    await page.evaluate(`window.play(${JSON.stringify(url)})`);
    await page.waitForFunction('document.getElementById("video").currentTime > 3', undefined, WAIT);
    await page.screenshot({ path: join(artifacts, 'live-slicer-playback.png') });
    assert.deepEqual(await page.evaluate('window.errors.filter((e) => e.fatal)'), []);
    assert.ok(requests.some((r) => /\/play\/s\/[^/]+\/v\/media_main\.m3u8/.test(r)), 'the live playlist comes from the session path');
    assert.ok(requests.filter((r) => /\/v\/media_main\.m3u8/.test(r)).length > 1, 'hls.js reloads the live playlist');
    // LL-HLS (the default): hls.js near the live edge loads parts (`seg_main_<n>_p<k>.m4s`) rather than whole segments.
    assert.ok(requests.some((r) => /\/play\/s\/[^/]+\/c\/seg_main_\d+(_p\d+)?\.m4s/.test(r)), 'segments (or their parts) come from the session path');
    await page.close();

    // The dashboard's Slicers view shows the live state and the input health.
    const dashboard = await browser.newPage();
    await dashboard.goto(`${server.url}/dashboard`);
    await dashboard.fill('#signin-owner', owner);
    await dashboard.fill('#signin-key', key);
    await dashboard.click('#signin-submit');
    await dashboard.waitForSelector('#workspace', WAIT);
    await dashboard.click('a[href="#slicers"]');
    const row = `#slicers tr[data-key="${slicer.id}"]`;
    await dashboard.waitForSelector(`${row} td.badge:text-is("live")`, WAIT);
    await dashboard.waitForSelector(`${row} td:has-text("kbit/s")`, WAIT);
    await dashboard.screenshot({ path: join(artifacts, 'dashboard-live-slicer.png'), fullPage: true });
    await dashboard.close();

    const refused = await fetch(url.replace('ct=e', 'ct=a'));
    assert.equal(refused.headers.get('x-playback-error-code'), '106', 'the event checks apply: ct must be e');
  });

  test('a schedule on the live slicer pushes it to a Custom RTMP receiver: active, at least 5 s recorded, stopped at stop', async () => {
    const port = await freePort('tcp');
    const streamKey = `sk_${randomBytes(12).toString('hex')}`;
    const recording = join(dataDir, 'received.flv');
    const receiver = startReceiver(['-listen', '1', '-i', `rtmp://127.0.0.1:${port}/live/${streamKey}`], recording);
    await receiverListening('rtmp', port);
    try {
      const target = await client.syndication.createTarget({ platform: 'Custom', target_protocol: 'rtmp', target_stream: `rtmp://127.0.0.1:${port}/live/${streamKey}` });
      const schedule = await client.syndication.createSchedule({ syndication_target_id: target.id, content_id: slicer.id, content_type: 'e', region: 'eu-central-1' });
      const started = await client.syndication.scheduleAction(schedule.id, 'start');
      assert.equal(started.status, 'active', `started: ${started.error ?? ''}`);
      await eventually(() => receiver.outTimeUs() >= 5_500_000, 'the receiver recorded 5.5 s of the slicer', 90_000);
      assert.equal((await client.syndication.getTarget(target.id)).status, 'active');
      const stopped = await client.syndication.scheduleAction(schedule.id, 'stop');
      assert.equal(stopped.status, 'stopped');
      const code = await exitedWithin(receiver, 30_000);
      assert.notEqual(code, 'running', 'the receiver saw the stream end');
      const seconds = await videoSeconds(recording);
      assert.ok(seconds >= 5, `at least 5 s of the slicer's video arrived (ffprobe): ${seconds} s`);
    } finally {
      if (receiver.child.exitCode === null) await receiver.kill();
    }
  });

  test('RESTART of the live slicer starts a new ffmpeg process; the pushed stream resumes and the slicer is live again', async () => {
    const before = markedPid(outputDir);
    assert.ok(before !== undefined && runs(before), 'the slicer process runs');
    const restarted = await client.managedSlicers.restart(slicer.id);
    const task = await waitForTask(restarted.task.id);
    assert.equal(task.state, 'COMPLETED', JSON.stringify(task));
    await eventually(() => !runs(before), 'the old process ended');
    const after = markedPid(outputDir);
    assert.ok(after !== undefined && after !== before && runs(after), `a new process: ${before} -> ${after}`);
    await stopPushers();
    push((await client.managedSlicers.get(slicer.id)).ingest_url as string);
    await waitForLive('live');
  });

  test('kill -9 of the server while the slicer is live: after the restart the orphan ffmpeg is ended and the slicer runs and goes live again', async () => {
    const orphan = markedPid(outputDir);
    assert.ok(orphan !== undefined && runs(orphan));
    await server.kill9();
    assert.ok(runs(orphan), 'kill -9 does not reach the ffmpeg child: it is an orphan');
    await stopPushers();
    await startServer();
    assert.ok(!runs(orphan), 'the orphan was ended on start');
    const again = await waitForLive('waiting_for_source');
    assert.equal(again.state, 'running');
    // The port is kept when free (the usual case); a port held by anything else at that moment means the next one.
    const port = Number(/:(\d+)\?/.exec(again.ingest_url ?? '')?.[1]);
    assert.ok(port >= PORT_BASE && port <= PORT_BASE + 9, `an ingest URL in the range: ${again.ingest_url}`);
    const pid = markedPid(outputDir);
    assert.ok(pid !== undefined && pid !== orphan && runs(pid));
    push(again.ingest_url as string);
    await waitForLive('live');
  });

  test('DELETE stops the process and removes the live output; the event then answers 404 (999)', async () => {
    const pid = markedPid(outputDir);
    assert.ok(pid !== undefined && runs(pid));
    const deleting = await client.managedSlicers.delete(slicer.id);
    const task = await waitForTask(deleting.task.id);
    assert.equal(task.state, 'COMPLETED', JSON.stringify(task));
    await eventually(() => !runs(pid), 'the slicer process ended');
    assert.equal(existsSync(outputDir), false, 'the live window is gone');
    const url = signPlaybackUrl({ baseUrl: server.url, kind: 'event', contentId: slicer.id, owner, key, expiresAt: Math.floor(Date.now() / 1000) + 600, params: [] }, () => randomBytes(8).toString('hex'));
    const answer = await fetch(url);
    assert.equal(answer.status, 404);
    assert.equal(answer.headers.get('x-playback-error-code'), '999');
    await stopPushers();
  });
});
