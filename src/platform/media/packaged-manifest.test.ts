import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codecsByVariant, parseMediaPlaylist } from './hls-media-playlist.js';
import { assetDir, isSafePathId, liveDir, sourcePath } from './media-layout.js';
import {
  MAX_RENDITIONS, describeRendition, packagedManifestOf, parsePackagedManifest, readPackagedManifest, writeManifest, type PackagedManifest, type PackagedRendition,
} from './packaged-manifest.js';

const root = mkdtempSync(join(tmpdir(), 'playline-packaged-manifest-'));
after(() => rmSync(root, { recursive: true, force: true }));

const rendition = (name: string): PackagedRendition => ({
  name, width: 320, height: 180, bandwidth: 300_000, average_bandwidth: 250_000, codecs: 'avc1.64001f,mp4a.40.2',
  playlist: `${name}/playlist.m3u8`, init: `${name}/init.mp4`, segments: [{ uri: `${name}/seg_00000.m4s`, duration_s: 4, bytes: 188 }],
});
const manifest = (renditions: PackagedRendition[]): PackagedManifest => ({ version: 1, duration_s: 4, segment_s: 4, renditions });

test('the one writer writes only what the one reader takes, atomically', async () => {
  const dir = join(root, 'written');
  mkdirSync(dir);
  const good = manifest([rendition('180p')]);
  await writeManifest(dir, good);
  assert.deepEqual(await readPackagedManifest(dir), good);
  assert.deepEqual(readdirSync(dir), ['manifest.json'], 'no temporary file left');

  const refusals: Array<[PackagedManifest, RegExp]> = [
    [manifest(Array.from({ length: MAX_RENDITIONS + 1 }, (_, i) => rendition(`r${i}`))), /at \/renditions: Expected array length to be less or equal to 16/],
    [manifest([rendition('180p'), rendition('180p')]), /names a rendition twice/],
    [manifest([{ ...rendition('180p'), segments: [] }]), /at \/renditions\/0\/segments/],
    [manifest([{ ...rendition('180p'), init: '../other/init.mp4' }]), /at \/renditions\/0\/init/],
    [manifest([{ ...rendition('180p'), codecs: 'avc1"bad' }]), /at \/renditions\/0\/codecs/],
  ];
  for (const [bad, problem] of refusals) {
    await assert.rejects(writeManifest(dir, bad), problem);
    assert.throws(() => parsePackagedManifest(JSON.stringify(bad)), problem);
  }
  assert.deepEqual(await readPackagedManifest(dir), good, 'a refused write leaves the manifest as it was');
  assert.deepEqual(readdirSync(dir), ['manifest.json']);
});

test('the reader says what is wrong: missing, not JSON', async () => {
  const dir = join(root, 'broken');
  mkdirSync(dir);
  await assert.rejects(readPackagedManifest(dir), /^Error: manifest\.json is missing$/);
  writeFileSync(join(dir, 'manifest.json'), '{"version": 1, ');
  await assert.rejects(readPackagedManifest(dir), /manifest\.json is not JSON/);
});

test('a rendition is described from the playlist and files ffmpeg wrote', async () => {
  const dir = join(root, 'encoded');
  mkdirSync(join(dir, '90p'), { recursive: true });
  writeFileSync(join(dir, '90p', 'playlist.m3u8'), '#EXTM3U\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:2.000000,\nseg_00000.m4s\n#EXTINF:1.0004,\nseg_00001.m4s\n#EXT-X-ENDLIST\n');
  writeFileSync(join(dir, '90p', 'seg_00000.m4s'), Buffer.alloc(1000));
  writeFileSync(join(dir, '90p', 'seg_00001.m4s'), Buffer.alloc(250));
  const described = await describeRendition(dir, { name: '90p', width: 160, height: 90, codecs: 'avc1.64000c,mp4a.40.2' });
  assert.deepEqual(described.segments, [{ uri: '90p/seg_00000.m4s', duration_s: 2, bytes: 1000 }, { uri: '90p/seg_00001.m4s', duration_s: 1, bytes: 250 }]);
  assert.deepEqual([described.init, described.playlist, described.bandwidth, described.average_bandwidth], ['90p/init.mp4', '90p/playlist.m3u8', 4000, 3334]);
  const whole = packagedManifestOf([described], 2, 'poster.jpg');
  assert.deepEqual([whole.duration_s, whole.segment_s, whole.poster], [3, 2, 'poster.jpg']);
  await writeManifest(dir, whole);
});

test('playlists: media segments with their init, and codecs per variant', () => {
  assert.deepEqual(parseMediaPlaylist('#EXTM3U\n#EXT-X-MAP:URI="init_0.mp4"\n#EXTINF:4.0,\nseg_1.m4s\n#EXT-X-ENDLIST\n'), { init: 'init_0.mp4', segments: [{ uri: 'seg_1.m4s', durationS: 4 }] });
  const master = '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS="avc1.64001f,mp4a.40.2"\n180p/playlist.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=1\nno-codecs.m3u8\n';
  assert.deepEqual([...codecsByVariant(master)], [['180p/playlist.m3u8', 'avc1.64001f,mp4a.40.2']]);
});

test('one id rule for every media path: writers refuse an unsafe id, readers can ask first', () => {
  assert.equal(assetDir('/m', 'a'.repeat(64), 'x_1-2'), `/m/assets/${'a'.repeat(64)}/x_1-2`);
  for (const unsafe of ['..', '', 'a/b', 'a'.repeat(65), '.hidden']) {
    assert.equal(isSafePathId(unsafe), false, unsafe);
    assert.throws(() => assetDir('/m', unsafe, 'x'), /unsafe id for a media path/);
    assert.throws(() => sourcePath('/m', 'x', unsafe), /unsafe id/);
    assert.throws(() => liveDir('/m', 'x', unsafe), /unsafe id/);
  }
});
