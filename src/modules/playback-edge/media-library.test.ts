import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../platform/clock.js';
import { assetDir } from '../../platform/media/media-layout.js';
import { parsePackagedManifest } from '../../platform/media/packaged-manifest.js';
import { FileMediaLibrary } from './media-library.js';
import { writeFakeAsset } from './testing/media-fixtures.js';

const root = mkdtempSync(join(tmpdir(), 'playline-library-'));
after(() => rmSync(root, { recursive: true, force: true }));
const OWNER = 'f'.repeat(32);

test('a packaged asset is found with its manifest, directory and the files a session may fetch; others are not', async () => {
  const manifest = await writeFakeAsset(root, OWNER, 'asset-1');
  const library = new FileMediaLibrary({ root, clock: new FakeClock() });
  const asset = await library.find(OWNER, 'asset-1');
  assert.ok(asset);
  assert.deepEqual(asset.manifest, manifest);
  assert.equal(asset.dir, assetDir(root, OWNER, 'asset-1'));
  assert.deepEqual([...asset.renditions.keys()], ['360p', '180p']);
  assert.ok(asset.files.has('360p/init.mp4') && asset.files.has('180p/seg_00002.m4s'));
  assert.ok(!asset.files.has('manifest.json') && !asset.files.has('360p/playlist.m3u8') && !asset.files.has('poster.jpg'));
  assert.equal(await library.find('0'.repeat(32), 'asset-1'), undefined, 'another workspace\'s library');
  assert.equal(await library.find(OWNER, 'asset-2'), undefined);
  assert.equal(await library.find(OWNER, '../x'), undefined, 'no path outside the media root');
  assert.equal(await library.find('..', 'asset-1'), undefined);
  assert.equal(await library.find(OWNER, 'a'.repeat(65)), undefined, 'an id no writer may use is not found (never an error)');
});

test('a looked-up manifest is reused until the revalidation time, then a deletion or a rewrite shows', async () => {
  const clock = new FakeClock();
  await writeFakeAsset(root, OWNER, 'asset-3');
  const library = new FileMediaLibrary({ root, clock, revalidateMs: 1000 });
  const first = await library.find(OWNER, 'asset-3');
  assert.ok(first);
  await rm(join(assetDir(root, OWNER, 'asset-3'), 'manifest.json'));
  assert.equal(await library.find(OWNER, 'asset-3'), first, 'within a second: no file access');
  clock.advance(1000);
  assert.equal(await library.find(OWNER, 'asset-3'), undefined, 'deleted');
  await writeFakeAsset(root, OWNER, 'asset-3', { durations: [6, 6] });
  assert.equal(await library.find(OWNER, 'asset-3'), undefined, 'the absence is remembered for a second too');
  clock.advance(1000);
  assert.equal((await library.find(OWNER, 'asset-3'))?.manifest.duration_s, 12, 'repackaged');
  const again = await library.find(OWNER, 'asset-3');
  clock.advance(1000);
  assert.equal(await library.find(OWNER, 'asset-3'), again, 'an unchanged file is not parsed again');
});

test('a manifest that breaks the contract is no asset (and says why); paths cannot leave the asset directory', async () => {
  const errors: string[] = [];
  const dir = assetDir(root, OWNER, 'asset-4');
  await writeFakeAsset(root, OWNER, 'asset-4');
  const good = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as { renditions: Array<{ init: string }> };
  for (const bad of ['../../other/init.mp4', '/etc/passwd', '360p/../../x', '.hidden/init.mp4']) {
    (good.renditions[0] as { init: string }).init = bad;
    assert.throws(() => parsePackagedManifest(JSON.stringify(good)), /breaks the packaged layout at \/renditions\/0\/init/, bad);
  }
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(good));
  const library = new FileMediaLibrary({ root, clock: new FakeClock(), onError: (message) => errors.push(message) });
  assert.equal(await library.find(OWNER, 'asset-4'), undefined);
  assert.match(errors[0] ?? '', /asset-4\/manifest\.json is not a valid packaged manifest/);
  await writeFile(join(dir, 'manifest.json'), '{"version": 1, ');
  assert.equal(await new FileMediaLibrary({ root, clock: new FakeClock(), onError: () => undefined }).find(OWNER, 'asset-4'), undefined);
});
