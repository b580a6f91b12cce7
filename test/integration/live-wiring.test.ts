import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/eventually.js';
import { mediaToolsSkip } from '../helpers/media.js';
import { freePort } from '../helpers/media-receiver.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * The live wiring of the root, seen from outside the managed-slicers module (issue 42, acceptance
 * 1): a slicer that records is handed the asset library (its recording state is `idle`, never
 * `unavailable`, once the library runs), and an hls push with a wrong token is refused by the
 * ingest admission and counted on /metrics like every other protocol's refusals.
 */
const skip = await mediaToolsSkip();

describe('live wiring: recording sink and ingest admission, through the app', { skip, timeout: 120_000 }, () => {
  let t: TestApp;
  before(async () => {
    const port = await freePort('udp');
    t = await createTestApp({ env: { PLAYLINE_SLICER_PROVISIONER: 'ffmpeg', PLAYLINE_SLICER_PORTS: `${port}-${port + 1}`, PLAYLINE_SLICER_BIND_HOST: '127.0.0.1', PLAYLINE_REGIONS: 'eu-central-1' } });
  });
  after(() => t.close());

  test('a recording slicer is handed the asset library: `live.recording` is idle once it runs', async () => {
    const slicer = await t.client.managedSlicers.create({ name: 'Wired', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'passthrough' });
    await eventually(async () => (await t.client.managedSlicers.getTask(slicer.task.id)).state === 'COMPLETED', 'the slicer runs', 60_000);
    assert.deepEqual((await t.client.managedSlicers.get(slicer.id)).live?.recording, { state: 'idle', reason: null });
    await t.client.managedSlicers.delete(slicer.id);
  });

  test('hls push goes through the ingest admission: a wrong token is refused and counted, the address paused', async () => {
    const slicer = await t.client.managedSlicers.create({ name: 'Pushed', region: 'eu-central-1', ingest_protocol: 'hls', output_profile: 'passthrough' });
    await eventually(async () => (await t.client.managedSlicers.getTask(slicer.task.id)).state === 'COMPLETED', 'the slicer runs', 60_000);
    const url = new URL((await t.client.managedSlicers.get(slicer.id)).ingest_url ?? '');
    const token = url.pathname.split('/').at(-2) as string;
    const put = (path: string) => t.app.inject({ method: 'PUT', url: path, payload: 'x', headers: { 'content-type': 'video/mp2t' } });
    const base = `/ingest/hls/${t.workspace.id}/${slicer.id}`;
    assert.equal((await put(`${base}/${'B'.repeat(token.length)}/seg0.ts`)).statusCode, 403);
    assert.equal((await put(`${base}/${token}/seg0.ts`)).statusCode, 429, 'the right token within the pause');
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^playline_ingest_refusals_total\{protocol="hls",reason="bad_key"\} 1$/m);
    assert.match(metrics, /^playline_ingest_refusals_total\{protocol="hls",reason="paused"\} 1$/m);
    await t.client.managedSlicers.delete(slicer.id);
  });
});
