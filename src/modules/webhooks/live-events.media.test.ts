import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { Value } from '@sinclair/typebox/value';
import { Webhook } from 'standardwebhooks';
import type { OperationalEventType } from '../../platform/operational-events.js';
import { operationalEventBody } from './webhooks.schema.js';
import { eventually } from '../../../test/helpers/eventually.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { systemClock } from '../../platform/clock.js';
import { startLocalReceiver, type LocalReceiver } from '../../platform/outbound/testing/local-receiver.js';

/**
 * live.started and live.ended from a real slicer: a test pattern pushed over SRT to an ffmpeg
 * slicer, then cut; both events reach a local receiver and verify with the standardwebhooks library.
 */
const skip = await mediaToolsSkip();
// Below the kernel's ephemeral range (32768-60999): no client socket of another test can hold these ports.
const PORT = 29500 + (process.pid % 300) * 2;

describe('live events from a real slicer (SRT, ffmpeg)', { skip, timeout: 120_000 }, () => {
  let t: TestApp;
  let receiver: LocalReceiver;
  let encoder: ChildProcess | undefined;
  before(async () => {
    t = await createTestApp({
      clock: systemClock,
      env: {
        PLAYLINE_SLICER_PROVISIONER: 'ffmpeg',
        PLAYLINE_SLICER_PORTS: `${PORT}-${PORT + 1}`,
        PLAYLINE_SLICER_BIND_HOST: '127.0.0.1',
        PLAYLINE_SLICER_STALL_MS: '2000',
        PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32',
      },
    });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
  });
  after(async () => {
    encoder?.kill('SIGKILL');
    await t.close();
    await receiver.close();
  });

  test('the encoder starts: live.started; it stops: live.ended (after the stall time), both signed', async () => {
    const sub = await t.client.webhooks.createSubscription({ url: receiver.url, event_types: ['live.started', 'live.ended'] });
    const slicer = await t.client.managedSlicers.create({ name: 'Webhook event', region: 'us-west-2', ingest_protocol: 'srt', output_profile: 'passthrough' });
    let ingestUrl: string | null = null;
    await eventually(async () => {
      const shown = await t.client.managedSlicers.get(slicer.id);
      ingestUrl = shown.live?.state === 'waiting_for_source' ? shown.ingest_url : null;
      return ingestUrl !== null;
    }, 'the slicer listens', 60_000);
    assert.equal(receiver.count(), 0, 'listening is not live');

    encoder = spawn('ffmpeg', [
      '-hide_banner', '-nostdin', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25', '-f', 'lavfi', '-i', 'sine',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '50', '-c:a', 'aac', '-b:a', '64k', '-f', 'mpegts', ingestUrl as unknown as string,
    ], { stdio: 'ignore' });
    await eventually(() => receiver.count() >= 1, 'live.started delivered', 60_000);
    encoder.kill('SIGKILL');
    await eventually(() => receiver.count() >= 2, 'live.ended delivered', 60_000);

    const events = receiver.received.map((got) => {
      const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
      return new Webhook(sub.signing_secret).verify(got.body, headers) as { type: string; data: Record<string, unknown> };
    });
    assert.deepEqual(events.map((e) => [e.type, e.data.slicer_id, e.data.owner]), [
      ['live.started', slicer.id, t.workspace.id],
      ['live.ended', slicer.id, t.workspace.id],
    ]);
    for (const event of events) assert.ok(Value.Check(operationalEventBody(event.type as OperationalEventType), event), JSON.stringify(event));
    assert.equal(events[1]?.data.state, 'waiting_for_source');
    assert.ok(receiver.received.every((got) => !got.body.includes('passphrase')), 'the stream key never travels in an event');
  });
});
