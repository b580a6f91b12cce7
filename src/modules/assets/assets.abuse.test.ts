import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { makeClip, makeGapFile, makeManyStreams, mediaToolsSkip } from '../../../test/helpers/media.js';
import type { AssetView } from './assets.schema.js';

const skip = await mediaToolsSkip();

/**
 * Findings N7 and N8 as an attacker plays them through the API: one workspace uploads a file made
 * to hold the only packaging slot (a timestamp gap) or to blow up probing (many streams), and
 * another workspace's ordinary clip must still become ready.
 */
describe('packaging abuse (one slot, two workspaces)', { skip }, () => {
  let t: TestApp;
  let scratch: string;
  let victimClip: string;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-assets-abuse-'));
    victimClip = await makeClip(scratch, 'victim.mp4', { seconds: 2, width: 160, height: 90 });
    t = await createTestApp({
      env: { PLAYLINE_PACKAGING_LADDER: '144p', PLAYLINE_PACKAGING_PRESET: 'ultrafast' },
    });
  });
  after(async () => {
    await t.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** The asset once packaging is over for it; bounded, so a held slot fails the test rather than hanging it. */
  const settled = (id: string, client = t.client): Promise<AssetView> =>
    client.assets.waitUntilPackaged(id, { intervalMs: 20, signal: AbortSignal.timeout(60_000) });

  test('at the default settings, the timestamp-gap upload (a few frames, then one at 2 h) ends failed with the reason; another workspace\'s clip becomes ready', async () => {
    const attack = await t.client.assets.upload(await makeGapFile(scratch, 'gap2h.mkv'), { title: 'gap' });
    const victim = await t.other.client.assets.upload(victimClip, { title: 'victim' });
    const ready = await settled(victim.id, t.other.client);
    assert.equal(ready.state, 'ready', JSON.stringify(ready));
    const failed = await settled(attack.id);
    assert.equal(failed.state, 'failed');
    // At the default settings: 7,200 s and 432,000 frames are within the duration and frame budgets; the gap is not.
    assert.match(failed.failure_reason ?? '', /^The video has no frame for 7199 s \(1 h 59 min\), from 0\.97 s to 7200 s; at most 60 s without a frame can be packaged on this server \(PLAYLINE_PACKAGING_MAX_GAP_S\)/);
  });

  test('an upload of many streams ends failed with the reason before it is probed in full; another workspace\'s clip becomes ready', async () => {
    const attack = await t.client.assets.upload(await makeManyStreams(scratch, 'streams12.mkv', 12), { title: 'streams' });
    const victim = await t.other.client.assets.upload(victimClip, { title: 'victim 2' });
    const ready = await settled(victim.id, t.other.client);
    assert.equal(ready.state, 'ready', JSON.stringify(ready));
    const failed = await settled(attack.id);
    assert.equal(failed.state, 'failed', JSON.stringify(failed));
    assert.equal(failed.failure_reason, 'The file has 12 streams; at most 8 (video, audio, subtitles and data together) are accepted');
  });
});
