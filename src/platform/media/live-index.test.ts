import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LiveIndexKeeper } from './live-index.js';

const EMPTY = '#EXTM3U\n#EXT-X-VERSION:7\n';
const MEDIA = '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:1\n#EXTINF:2.000000,\nseg_main_1.m4s\n#EXTINF:2.000000,\nseg_main_2.m4s\n';
const DESCRIBED = '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-STREAM-INF:BANDWIDTH=200000,AVERAGE-BANDWIDTH=150000\nmedia_main.m3u8\n';

describe('LiveIndexKeeper', () => {
  test('an index.m3u8 ffmpeg wrote without a variant is written anew with the window\'s media playlist, once a segment can be measured; again when ffmpeg writes it again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'playline-live-index-'));
    try {
      const keeper = new LiveIndexKeeper(dir);
      const index = join(dir, 'index.m3u8');
      assert.equal(await keeper.check(), 'unchanged', 'no index yet');
      await writeFile(index, EMPTY);
      assert.equal(await keeper.check(), 'waiting', 'no segment to measure yet');
      assert.equal(await readFile(index, 'utf8'), EMPTY);
      await writeFile(join(dir, 'seg_main_1.m4s'), Buffer.alloc(25_000));
      await writeFile(join(dir, 'seg_main_2.m4s'), Buffer.alloc(50_000));
      await writeFile(join(dir, 'media_main.m3u8'), MEDIA);
      assert.equal(await keeper.check(), 'rewritten');
      assert.equal(await readFile(index, 'utf8'), DESCRIBED);
      assert.deepEqual((await readdir(dir)).filter((f) => f.startsWith('.')), [], 'no temporary file left');
      const { ino } = await stat(index);
      assert.equal(await keeper.check(), 'unchanged', 'nothing to do while the file stays as written');
      assert.equal((await stat(index)).ino, ino);
      // The slicer's ffmpeg starts again (its source came back) and writes its index once more.
      await rm(index);
      await writeFile(index, EMPTY);
      assert.equal(await keeper.check(), 'rewritten');
      assert.equal(await readFile(index, 'utf8'), DESCRIBED);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an index that names its variants (a transcoding profile) is left as ffmpeg wrote it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'playline-live-index-'));
    try {
      const written = '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-STREAM-INF:BANDWIDTH=1680000,RESOLUTION=854x480,CODECS="avc1.64001e,mp4a.40.2"\nmedia_480p.m3u8\n';
      await writeFile(join(dir, 'index.m3u8'), written);
      await writeFile(join(dir, 'media_main.m3u8'), MEDIA);
      const keeper = new LiveIndexKeeper(dir);
      assert.equal(await keeper.check(), 'playable');
      assert.equal(await keeper.check(), 'unchanged');
      assert.equal(await readFile(join(dir, 'index.m3u8'), 'utf8'), written);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
