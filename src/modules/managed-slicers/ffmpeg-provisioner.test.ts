import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../../../test/helpers/eventually.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import type { FakeClock } from '../../platform/clock.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import { liveDir } from '../../platform/media/media-layout.js';
import type { ManagedSlicerTaskView } from './managed-slicers.schema.js';
import { portBlock } from '../../../test/helpers/ports.js';

/**
 * Slicer tasks carried out by the ffmpeg provisioner, through the API: each task's state follows
 * what really happened to the ffmpeg process and its port.
 */
const skip = await mediaToolsSkip();
// Ingest ports: a free block of the test port window (test/helpers/ports.ts, PLAYLINE_TEST_PORT_BASE),
// below the kernel's ephemeral range, so no client socket of another test holds them.
const PORT = await portBlock(10);

describe('ffmpeg slicer tasks', { skip, timeout: 120_000 }, () => {
  let t: TestApp;
  let blocker: Socket;
  const logs: string[] = [];

  before(async () => {
    t = await createTestApp({
      logDestination: { write: (line: string) => void logs.push(line) },
      env: {
        PLAYLINE_LOG_LEVEL: 'debug',
        PLAYLINE_SLICER_PROVISIONER: 'ffmpeg',
        PLAYLINE_SLICER_PORTS: `${PORT}-${PORT + 1}`,
        PLAYLINE_SLICER_BIND_HOST: '127.0.0.1',
        PLAYLINE_PUBLIC_HOST: 'ingest.example.test',
        PLAYLINE_MAX_SLICERS: '2',
        PLAYLINE_REGIONS: 'eu-central-1',
      },
    });
    blocker = createSocket('udp4');
    await new Promise<void>((resolve) => blocker.bind(PORT, '127.0.0.1', resolve));
  });
  after(async () => {
    blocker.close();
    await t.close();
  });

  const finished = async (id: string): Promise<ManagedSlicerTaskView> => {
    let task: ManagedSlicerTaskView | undefined;
    await eventually(async () => {
      task = await t.client.managedSlicers.getTask(id);
      return task.state === 'COMPLETED' || task.state === 'FAILED';
    }, `task ${id} finished`);
    // A failed task says why in the assertion that expected it to complete.
    if (task?.state === 'FAILED') process.stderr.write(`task ${task.operation} ${id} FAILED: ${task.failure_reason ?? '(no reason)'} ${logs.filter((l) => l.includes('threw')).join(' ').slice(0, 1500)}\n`);
    return task as ManagedSlicerTaskView;
  };
  const body = (name: string, ingest_protocol: 'srt' | 'rtmp' | 'rist' | 'zixi' | 'hls') =>
    ({ name, region: 'eu-central-1', ingest_protocol, output_profile: 'passthrough' }) as const;

  test('SRT with every port of the range in use: the CREATE task fails with that reason and the slicer shows it', async () => {
    // Both ports of the range held over UDP: SRT finds none free.
    const second = createSocket('udp4');
    await new Promise<void>((resolve) => second.bind(PORT + 1, '127.0.0.1', resolve));
    try {
      const slicer = await t.client.managedSlicers.create(body('Clash', 'srt'));
      const task = await finished(slicer.task.id);
      assert.equal(task.state, 'FAILED');
      assert.match(task.failure_reason ?? '', new RegExp(`No free ingest port \\(PLAYLINE_SLICER_PORTS ${PORT}-${PORT + 1}\\): UDP port ${PORT} on 127\\.0\\.0\\.1 is already in use`));
      const shown = await t.client.managedSlicers.get(slicer.id);
      assert.equal(shown.state, 'failed');
      assert.equal(shown.live?.state, 'failed');
      assert.equal(shown.live?.failure_reason, task.failure_reason);
      const deleted = await t.client.managedSlicers.delete(slicer.id);
      assert.equal((await finished(deleted.task.id)).state, 'COMPLETED');
    } finally {
      second.close();
    }
  });

  test('zixi: the CREATE task fails with the reason (ffmpeg cannot receive it)', async () => {
    const slicer = await t.client.managedSlicers.create(body('Zixi', 'zixi'));
    const task = await finished(slicer.task.id);
    assert.equal(task.state, 'FAILED');
    assert.match(task.failure_reason ?? '', /zixi ingest .* cannot be received with ffmpeg/);
    await finished((await t.client.managedSlicers.delete(slicer.id)).task.id);
  });

  test('RTMP: the ingest front listens on a free port of the range (TCP) and lets only the stream key publish; the slicer\'s ffmpeg reads the publisher\'s FLV on stdin (no key, no port on its command line); the cap answers 409; UPDATE starts a new process with the new profile on the same port; DELETE stops it and removes its output', async () => {
    const slicer = await t.client.managedSlicers.create(body('RTMP', 'rtmp'));
    const task = await finished(slicer.task.id);
    assert.equal(task.state, 'COMPLETED', JSON.stringify(task));
    const running = await t.client.managedSlicers.get(slicer.id);
    // PORT is held over UDP only, so a TCP listener may take it. The stream name is the slicer's stream key.
    assert.match(running.ingest_url ?? '', new RegExp(`^rtmp://ingest\\.example\\.test:${PORT}/live/[A-Za-z0-9_-]{32}$`));
    assert.equal(running.live?.state, 'waiting_for_source');
    const live = t.runtime.managedSlicers.live();
    assert.equal(live?.pidOf(slicer.id), undefined, 'no ffmpeg runs until a publisher with the key arrives');
    const key = (running.ingest_url ?? '').split('/').at(-1) as string;
    const encode = (name: string) =>
      spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'quiet', '-re', '-f', 'lavfi', '-i', 'testsrc=size=160x90:rate=25', '-f', 'lavfi', '-i', 'sine', '-t', '30',
        '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-c:a', 'aac', '-f', 'flv', `rtmp://127.0.0.1:${PORT}/live/${name}`], { stdio: 'ignore' });
    const exited = (child: ReturnType<typeof spawn>) => new Promise<number | null>((resolve) => child.once('close', resolve));
    const outsider = encode('guessed-key');
    assert.notEqual(await exited(outsider), 0, 'a wrong key is refused');
    assert.equal(live?.pidOf(slicer.id), undefined);
    // The ingest admission's failure pause: right after a wrong key, the same address is refused even with the right one.
    assert.notEqual(await exited(encode(key)), 0, 'the address that guessed is paused');
    assert.equal(live?.pidOf(slicer.id), undefined);
    const refusals = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(refusals, /^playline_ingest_refusals_total\{protocol="rtmp",reason="bad_key"\} 1$/m);
    assert.match(refusals, /^playline_ingest_refusals_total\{protocol="rtmp",reason="paused"\} 1$/m);
    assert.equal(logs.filter((line) => line.includes('ingest refused: the stream key was not accepted')).length, 1, 'one log line per refusal of a key');
    (t.clock as FakeClock).advance(2_000);
    const encoder = encode(key);
    try {
      await eventually(async () => (await t.client.managedSlicers.get(slicer.id)).live?.state === 'live', 'live with the key', 30_000);
      const pid = live?.pidOf(slicer.id);
      assert.ok(pid !== undefined && existsSync(`/proc/${pid}`));
      // The key is in no process's arguments but the encoder's own, and in no log line.
      const holders = spawnSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).stdout.split('\n').filter((line) => line.includes(key)).map((line) => Number(line.trim().split(' ')[0]));
      assert.deepEqual(holders, [encoder.pid], 'ps -eo args: only the encoder holds the key');
      assert.equal(logs.some((line) => line.includes(key)), false, 'no log line holds the key');
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      assert.match(cmdline, /-protocol_whitelist pipe -f flv -i pipe:0/);
      assert.ok(!cmdline.includes(key) && !cmdline.includes(String(PORT)), 'neither the key nor the port is on the command line');
      const dir = liveDir(mediaRootOf(t.runtime.config), t.workspace.id, slicer.id);
      assert.ok(existsSync(join(dir, '.slicer-process.json')));

      const other = await t.client.managedSlicers.create(body('Second', 'srt'));
      await assert.rejects(t.client.managedSlicers.create(body('Third', 'srt')), /409/);
      assert.equal((await finished(other.task.id)).state, 'COMPLETED');

      // UPDATE applies the new configuration: a new process with the profile's ladder, same port (SRT spawns at once).
      const otherPid = live?.pidOf(other.id);
      const updating = await t.client.managedSlicers.update(other.id, { output_profile: 'sd-480p' });
      assert.equal((await finished(updating.task.id)).state, 'COMPLETED');
      const updatedPid = live?.pidOf(other.id);
      assert.ok(otherPid !== undefined && updatedPid !== undefined && updatedPid !== otherPid, `a new process: ${otherPid} -> ${updatedPid}`);
      await eventually(() => !existsSync(`/proc/${otherPid}`), 'the old process ended');
      assert.match(readFileSync(`/proc/${updatedPid}/cmdline`, 'utf8').replaceAll('\0', ' '), /scale=-2:480 .*-f mp4 -movflags \+frag_keyframe\+delay_moov.* unix:\/\S+\/480p\.sock/, 'the new profile, written as LL-HLS (the only live output) to the server\'s socket');
      const otherUrl = (await t.client.managedSlicers.get(other.id)).ingest_url;
      const passphrase = (otherUrl ?? '').split('passphrase=')[1]?.split('&')[0] ?? 'none';
      assert.equal(spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout.includes(passphrase), false, 'ps -eo args: no process holds the SRT passphrase');
      assert.equal(logs.some((line) => line.includes(passphrase)), false, 'no log line holds the passphrase');
      assert.match(otherUrl ?? '', /^srt:\/\/ingest\.example\.test:\d+\?passphrase=[A-Za-z0-9_-]{32}&pbkeylen=16$/);
      assert.ok(!readFileSync(`/proc/${updatedPid}/cmdline`, 'utf8').includes((otherUrl ?? '').split('passphrase=')[1]?.split('&')[0] ?? 'none'), 'the passphrase is not on the command line');

      // Rotating the key disconnects the encoder that uses the old one; the old key is refused, the new one publishes.
      const encoderGone = exited(encoder);
      const rotated = await t.client.managedSlicers.rotateStreamKey(slicer.id);
      assert.equal((await finished(rotated.task.id)).state, 'COMPLETED');
      assert.notEqual(await encoderGone, 0, 'the encoder with the old key was disconnected');
      await eventually(() => !existsSync(`/proc/${pid}`), 'its ffmpeg ended');
      const newKey = (rotated.ingest_url ?? '').split('/').at(-1) as string;
      assert.ok(newKey.length === 32 && newKey !== key);
      assert.notEqual(await exited(encode(key)), 0, 'the old key is refused');
      // Once the failure pause of this address is over.
      (t.clock as FakeClock).advance(2_000);
      const renewed = encode(newKey);
      try {
        await eventually(async () => (await t.client.managedSlicers.get(slicer.id)).live?.state === 'live', 'live again with the new key', 30_000);
      } finally {
        renewed.kill('SIGKILL');
      }

      const deleting = await t.client.managedSlicers.delete(slicer.id);
      assert.equal((await finished(deleting.task.id)).state, 'COMPLETED');
      await eventually(() => !existsSync(`/proc/${pid}`), 'the process ended');
      assert.equal(existsSync(dir), false, 'the output directory is removed');
      await finished((await t.client.managedSlicers.delete(other.id)).task.id);
    } finally {
      encoder.kill('SIGKILL');
    }
  });

  test('metrics count the slicer processes by state; deleting the workspace stops its slicers and removes their live output', async () => {
    const other = t.other.client.managedSlicers;
    const slicer = await other.create(body('Doomed', 'srt'));
    let task: ManagedSlicerTaskView | undefined;
    await eventually(async () => {
      task = await other.getTask(slicer.task.id);
      return task.state === 'COMPLETED' || task.state === 'FAILED';
    }, 'CREATE finished');
    assert.equal(task?.state, 'COMPLETED', JSON.stringify(task));
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^playline_slicers_running\{state="waiting_for_source"\} 1$/m);
    assert.match(metrics, /^playline_slicers_running\{state="live"\} 0$/m);
    assert.match(metrics, /^playline_slicer_restarts_total 0$/m);
    const pid = t.runtime.managedSlicers.live()?.pidOf(slicer.id);
    assert.ok(pid !== undefined && existsSync(`/proc/${pid}`));
    const dir = liveDir(mediaRootOf(t.runtime.config), t.other.workspace.id, slicer.id);
    assert.ok(existsSync(dir));

    await t.runtime.workspaceDeletion.delete(t.other.workspace.id);
    await eventually(() => !existsSync(`/proc/${pid}`), 'the process ended');
    assert.equal(existsSync(dir), false);
    assert.match((await t.app.inject({ method: 'GET', url: '/metrics' })).body, /^playline_slicers_running\{state="waiting_for_source"\} 0$/m);
  });

  test('hls push: the ingest URL takes the encoder\'s PUTs (token checked), the slicer reads them and goes live', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.runtime.managedSlicers.listening(Number(new URL(address).port));
    const slicer = await t.client.managedSlicers.create(body('Pushed', 'hls'));
    const task = await finished(slicer.task.id);
    assert.equal(task.state, 'COMPLETED', JSON.stringify(task));
    const shown = await t.client.managedSlicers.get(slicer.id);
    const base = `http://ingest.example.test:${new URL(address).port}/ingest/hls/${t.workspace.id}/${slicer.id}/`;
    assert.ok(shown.ingest_url?.startsWith(base) && shown.ingest_url.endsWith('/index.m3u8'), String(shown.ingest_url));
    assert.equal(shown.live?.state, 'waiting_for_source');
    const url = (shown.ingest_url as string).replace('ingest.example.test', '127.0.0.1');
    const token = url.split('/').at(-2) as string;

    const put = (path: string, payload = 'x') => t.app.inject({ method: 'PUT', url: path, payload, headers: { 'content-type': 'video/mp2t' } });
    const wrongToken = await put(`/ingest/hls/${t.workspace.id}/${slicer.id}/${'A'.repeat(token.length)}/seg0.ts`);
    assert.equal(wrongToken.statusCode, 403);
    assert.equal(JSON.parse(wrongToken.body).code, 'ingest_token_invalid');
    // The ingest admission's failure pause: the address that guessed is refused even with the right token, until it passed.
    const paused = await put(`/ingest/hls/${t.workspace.id}/${slicer.id}/${token}/seg0.ts`);
    assert.deepEqual([paused.statusCode, JSON.parse(paused.body).code], [429, 'throttled']);
    (t.clock as FakeClock).advance(2_000);
    assert.equal((await put(`/ingest/hls/${t.workspace.id}/${slicer.id}/${token}/notes.txt`)).statusCode, 400);
    assert.equal((await put(`/ingest/hls/${t.other.workspace.id}/${slicer.id}/${token}/seg0.ts`)).statusCode, 403, 'the token names its workspace');
    assert.match((await t.app.inject({ method: 'GET', url: '/metrics' })).body, /^playline_ingest_refusals_total\{protocol="hls",reason="bad_key"\} 2$/m);
    (t.clock as FakeClock).advance(2_000);

    const encoder = spawn('ffmpeg', [
      '-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25', '-f', 'lavfi', '-i', 'sine', '-t', '60',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '25', '-c:a', 'aac', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '4',
      '-hls_flags', 'delete_segments', '-method', 'PUT', url,
    ], { stdio: 'ignore' });
    try {
      await eventually(async () => (await t.client.managedSlicers.get(slicer.id)).live?.state === 'live', 'the hls slicer is live', 60_000);
      const dir = liveDir(mediaRootOf(t.runtime.config), t.workspace.id, slicer.id);
      await eventually(() => existsSync(join(dir, 'index.m3u8')), 'the live window is written');
    } finally {
      encoder.kill('SIGKILL');
    }
    const deleting = await t.client.managedSlicers.delete(slicer.id);
    assert.equal((await finished(deleting.task.id)).state, 'COMPLETED');
    assert.equal((await put(`/ingest/hls/${t.workspace.id}/${slicer.id}/${token}/seg0.ts`)).statusCode, 403, 'a deleted slicer takes no push: its key went with it');
  });
});
