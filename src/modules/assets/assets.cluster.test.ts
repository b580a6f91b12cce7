import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterPair, clusterPairProblem, type ClusterPair } from '../../../test/helpers/cluster-pair.js';
import { makeClip, makeGapFile, mediaToolsSkip } from '../../../test/helpers/media.js';
import { pacedFfmpeg } from '../../../test/helpers/paced-ffmpeg.js';
import { mediaUris, variantUris } from '../playback-edge/testing/edge-test-kit.js';
import type { FakeClock } from '../../platform/clock.js';
import { assetDir, assetWorkDir } from '../../platform/media/media-layout.js';
import { DELETION_CHECK_MS } from './packaging-runner.js';

const skip = (await clusterPairProblem()) || (await mediaToolsSkip());

/** Pids of the processes whose command line names `text` (Linux /proc). */
function processesNaming(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

/** Bounded wait for work in other processes (asserts no duration). */
async function eventually(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never: ${what}`);
}

describe('asset library in cluster mode (two instances, one PostgreSQL, one media directory)', { skip }, () => {
  let pair: ClusterPair;
  let scratch: string;
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-assets-cluster-'));
    // Packaging reads at twice real time: a clip stays playable-but-not-ready for half its length.
    const ffmpeg = await pacedFfmpeg(scratch, 2);
    pair = await clusterPair({ env: { PLAYLINE_MEDIA_DIR: join(scratch, 'media'), PLAYLINE_PACKAGING_LADDER: '144p', PLAYLINE_PACKAGING_PRESET: 'ultrafast', PLAYLINE_PACKAGING_LEASE_MS: '600000', PLAYLINE_FFMPEG_PATH: ffmpeg } });
  });
  after(async () => {
    await pair.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('an upload to one instance is packaged once (leased in PostgreSQL) and served by the other', async () => {
    const clip = await makeClip(scratch, 'clip.mp4', { seconds: 2 });
    // Each test app has its own workspace; the second instance reads the first's asset with its key.
    const onB = pair.b.clientFor(pair.a.workspace.id, pair.a.key.secret);
    const uploaded = await pair.a.client.assets.upload(clip, { title: 'shared' });
    const ready = await onB.assets.waitUntilPackaged(uploaded.id, { intervalMs: 20 });
    assert.equal(ready.state, 'ready', JSON.stringify(ready));
    assert.equal(pair.a.runtime.assets.files.root, pair.b.runtime.assets.files.root);
    assert.ok(existsSync(join(assetDir(join(scratch, 'media'), pair.a.workspace.id, uploaded.id), 'manifest.json')));
    const poster = await onB.core.send('GET', ready.poster ?? '');
    assert.equal(poster.status, 200);
    const deleted = await onB.assets.delete(uploaded.id);
    assert.equal(deleted.message, 'Deleted');
    assert.equal(existsSync(assetDir(join(scratch, 'media'), pair.a.workspace.id, uploaded.id)), false);
    assert.equal((await pair.a.client.core.send('GET', `/api/v4/assets/${uploaded.id}`)).status, 404);
  });

  test('an asset packaged on one instance plays on the other while still packaged (state in PostgreSQL, files in the shared directory), then as VOD once ready', async () => {
    const clip = await makeClip(scratch, 'progressive.mp4', { seconds: 16 });
    const onB = pair.b.clientFor(pair.a.workspace.id, pair.a.key.secret);
    const uploaded = await pair.a.client.assets.upload(clip, { title: 'progressive' });
    const playable = await onB.assets.waitUntilPackaged(uploaded.id, { until: 'playable', intervalMs: 20 });
    assert.equal(playable.state, 'playable', JSON.stringify(playable));
    const url = onB.playback.url(uploaded.id, { ttlS: 3600 });
    const multivariant = await pair.b.app.inject({ method: 'GET', url });
    assert.equal(multivariant.statusCode, 200, multivariant.body);
    const variant = variantUris(url, multivariant.body)[0] as string;
    const event = await pair.b.app.inject({ method: 'GET', url: variant });
    assert.match(event.body, /#EXT-X-PLAYLIST-TYPE:EVENT/);
    assert.doesNotMatch(event.body, /#EXT-X-ENDLIST/);
    const early = mediaUris(variant, event.body).segments;
    assert.ok(early.length >= 1);
    assert.equal((await pair.b.app.inject({ method: 'GET', url: early[0] as string })).statusCode, 200);
    const ready = await onB.assets.waitUntilPackaged(uploaded.id, { intervalMs: 20 });
    assert.equal(ready.state, 'ready', JSON.stringify(ready));
    (pair.b.clock as FakeClock).advance(1_000);
    const vod = await pair.b.app.inject({ method: 'GET', url: variant });
    assert.match(vod.body, /#EXT-X-PLAYLIST-TYPE:VOD/);
    assert.match(vod.body, /#EXT-X-ENDLIST/);
    assert.deepEqual(mediaUris(variant, vod.body).segments.slice(0, early.length), early, 'the same segment URLs');
    await onB.assets.delete(uploaded.id);
  });

  test('deleting an asset on one instance while another packages it stops that ffmpeg within seconds, removes its folder, and frees the slot', async () => {
    const media = join(scratch, 'media');
    const ws = pair.a.workspace.id;
    // The gap file with the default 4 h budget: a long run (432,000 frames) holding A's only slot.
    const long = await pair.a.client.assets.upload(await makeGapFile(scratch, 'gap2h.mkv'), { title: 'long' });
    await eventually(() => processesNaming(long.id).length > 0, 'its ffmpeg running on A');
    const pids = processesNaming(long.id);
    const onB = pair.b.clientFor(ws, pair.a.key.secret);
    assert.equal((await onB.assets.delete(long.id)).message, 'Deleted');
    // A learns it from the asset row, at its next look; its lease (10 minutes here) is not due for long.
    (pair.a.clock as FakeClock).advance(DELETION_CHECK_MS);
    await eventually(() => pids.every((pid) => !existsSync(`/proc/${pid}`) || !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(long.id)), 'its ffmpeg gone');
    await eventually(() => !existsSync(assetDir(media, ws, long.id)) && !existsSync(assetWorkDir(media, ws, long.id)), 'its folder removed');
    const next = await pair.a.client.assets.upload(await makeClip(scratch, 'next.mp4', { seconds: 1, width: 160, height: 90 }), { title: 'next' });
    const ready = await pair.a.client.assets.waitUntilPackaged(next.id, { intervalMs: 20, signal: AbortSignal.timeout(60_000) });
    assert.equal(ready.state, 'ready', JSON.stringify(ready));
  });
});
