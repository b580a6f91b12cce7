import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlaylineClient } from '../../src/client/index.js';
import { startLocalReceiver, type LocalReceiver } from '../../src/platform/outbound/testing/local-receiver.js';
import { eventually } from '../helpers/eventually.js';
import { mediaToolsSkip } from '../helpers/media.js';
import { freePort } from '../helpers/media-receiver.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

/**
 * Issue 36, finding 1 and acceptance 1: a slicer created and recording, the server stopped and
 * started again: the resumed slicer records its next event (`recording.ready`, an asset), and its
 * recording state is never `unavailable` (the asset library is there). Before the fix the slicers
 * resumed at start asked for the asset library before it had started and never recorded.
 */
const skip = await mediaToolsSkip();
const dataDir = mkdtempSync(join(tmpdir(), 'playline-rec-restart-'));
const servers: ServerProcess[] = [];
const encoders: ChildProcess[] = [];
let receiver: LocalReceiver | undefined;
after(async () => {
  for (const e of encoders) e.kill('SIGKILL');
  for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) await s.kill9();
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
});

/** An SRT test pattern pushed for `seconds` (resolves when the encoder exits). */
const push = (ingest: string, seconds: number): Promise<void> => {
  const encoder = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'quiet', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25', '-f', 'lavfi', '-i', 'sine=sample_rate=48000',
    '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-pix_fmt', 'yuv420p', '-g', '50', '-c:a', 'aac', '-b:a', '64k', '-f', 'mpegts', ingest], { stdio: 'ignore' });
  encoders.push(encoder);
  return new Promise((resolve) => encoder.once('exit', () => resolve()));
};

test('a slicer resumed after a server restart records its next event: recording.ready, an asset, never `unavailable`', { skip, timeout: 300_000 }, async (ctx) => {
  receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
  // One port, from the OS: the slicer keeps it across the restart.
  const port = await freePort('udp');
  const env = {
    PLAYLINE_DATA_DIR: dataDir, PLAYLINE_SLICER_PROVISIONER: 'ffmpeg', PLAYLINE_SLICER_PORTS: `${port}-${port}`, PLAYLINE_SLICER_BIND_HOST: '127.0.0.1',
    PLAYLINE_PUBLIC_HOST: '127.0.0.1', PLAYLINE_REGIONS: 'eu-central-1', PLAYLINE_LIVE_RECONNECT_GRACE_MS: '1000', PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32',
  };
  const first = await startServerProcess(env);
  servers.push(first);
  const { owner, key: apiKey } = bootstrapCredentials(first);
  let client = new PlaylineClient({ baseUrl: first.url, owner, apiKey });
  await client.webhooks.createSubscription({ url: receiver.url, event_types: ['recording.ready'] });
  const slicer = await client.managedSlicers.create({ name: 'Resumed', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'passthrough' });
  const recordingStates: string[] = [];
  let ingest = '';
  const waiting = async (c: PlaylineClient) => {
    const shown = await c.managedSlicers.get(slicer.id);
    ingest = shown.ingest_url ?? '';
    if (shown.live?.recording) recordingStates.push(shown.live.recording.state);
    return shown.live?.state === 'waiting_for_source' && ingest !== '';
  };
  const readyAssets = async (c: PlaylineClient) => (await c.assets.list({ source_slicer_id: slicer.id })).page.items.filter((a) => a.state === 'ready').length;

  // Recording on the first server.
  await eventually(() => waiting(client), 'the slicer waits for its source', 60_000);
  await push(ingest, 6);
  await eventually(async () => (await readyAssets(client)) === 1, 'the first event is recorded', 60_000);

  assert.equal(await first.stop(), 0, 'graceful shutdown');
  const second = await startServerProcess(env);
  servers.push(second);
  client = new PlaylineClient({ baseUrl: second.url, owner, apiKey });
  await eventually(() => waiting(client), 'the resumed slicer waits for its source', 60_000);
  const resumed = await client.managedSlicers.get(slicer.id);
  assert.deepEqual(resumed.live?.recording, { state: 'idle', reason: null }, 'the resumed slicer is ready to record');

  await push(ingest, 6);
  await eventually(async () => (await waiting(client)) && (await readyAssets(client)) === 2, 'the resumed slicer\'s event is recorded', 60_000);
  await eventually(() => receiver!.count() >= 2, 'two recording.ready webhooks', 30_000);
  const types = receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type);
  assert.deepEqual(types, ['recording.ready', 'recording.ready']);
  assert.ok(!recordingStates.includes('unavailable'), `recording states seen: ${recordingStates.join(', ')}`);
  ctx.diagnostic(`recording states seen: ${[...new Set(recordingStates)].join(', ')}`);
  assert.equal(await second.stop(), 0, 'graceful shutdown');
});
