import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileMediaLibrary } from '../modules/playback-edge/media-library.js';
import { FakeClock } from '../platform/clock.js';
import { placeSimulatedMedia } from './simulated-media.js';

const required = process.env.PLAYLINE_REQUIRE_SERVICES === '1';
const skip = existsSync('/usr/bin/ffmpeg') || required ? false : 'ffmpeg not installed (apt-get install ffmpeg)';
const root = mkdtempSync(join(tmpdir(), 'playline-simulated-media-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('the simulator\'s assets: one clip made once, linked as every asset and ad of every owner, packaged for the edge', { skip }, async () => {
  const owners = ['a'.repeat(32), 'b'.repeat(32)];
  const media = await placeSimulatedMedia({ root, owners, assetsPerOwner: 3 });
  const library = new FileMediaLibrary({ root, clock: new FakeClock() });
  const ids = media.assetsOf(owners[0] as string);
  assert.equal(ids.length, 3);
  assert.ok(ids.every((id) => /^[0-9a-f]{32}$/.test(id)));
  assert.notDeepEqual(ids, media.assetsOf(owners[1] as string), 'each owner has its own asset ids');
  const asset = await library.find(owners[0] as string, ids[0] as string);
  assert.ok(asset, 'packaged in the layout the edge reads');
  assert.deepEqual(asset.manifest.renditions.map((r) => [r.name, r.height, r.segments.length]), [['90p', 90, 2]]);
  assert.ok(await library.find(owners[1] as string, media.adOf(owners[1] as string)), 'the ad too');
  const segment = join(asset.dir, '90p', 'seg_00000.m4s');
  assert.ok(statSync(segment).nlink > 1, 'hard-linked, not copied');
  const again = await placeSimulatedMedia({ root, owners, assetsPerOwner: 3 });
  assert.deepEqual(again.assetsOf(owners[0] as string), ids, 'a second run plays the same assets');
});
