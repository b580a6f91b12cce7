import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tracksOfInit } from './fmp4-tracks.js';
import { LiveStreamDescriber, streamInfWith } from './live-stream-inf.js';

const box = (type: string, ...payload: Buffer[]): Buffer => {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
};
const bytes = (...values: number[]) => Buffer.from(values);
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

/** A one-track init segment: tkhd (track 1), mdhd (timescale 90000), hdlr `vide`, and this visual sample entry's boxes. */
function videoInit(entryType: string, config: Buffer): Buffer {
  const visualFields = Buffer.alloc(78);
  visualFields.writeUInt16BE(1920, 24);
  visualFields.writeUInt16BE(1080, 26);
  const stsd = box('stsd', u32(0), u32(1), box(entryType, visualFields, config));
  return box(
    'moov',
    box(
      'trak',
      box('tkhd', u32(0), u32(0), u32(0), u32(1), Buffer.alloc(68)),
      box(
        'mdia',
        box('mdhd', u32(0), u32(0), u32(0), u32(90000), Buffer.alloc(8)),
        box('hdlr', u32(0), u32(0), Buffer.from('vide'), Buffer.alloc(13)),
        box('minf', box('stbl', stsd)),
      ),
    ),
  );
}

describe('init segment codecs (RFC 6381)', () => {
  test('HEVC: profile, reversed compatibility flags, tier and level, trailing zero constraint bytes dropped', () => {
    // Main profile, compatibility flags 0x60000000, level 3.1 (93), constraint byte 0xB0: Apple's `hvc1.1.6.L93.B0`.
    const hvcC = box('hvcC', bytes(1, 0x01), u32(0x60000000), bytes(0xb0, 0, 0, 0, 0, 0, 93), Buffer.alloc(10));
    assert.deepEqual(tracksOfInit(videoInit('hvc1', hvcC)).map((t) => [t.kind, t.codec, t.width, t.height]), [['video', 'hvc1.1.6.L93.B0', 1920, 1080]]);
  });

  test('H.264: avc1.PPCCLL from avcC; an unknown sample entry has no codec', () => {
    assert.equal(tracksOfInit(videoInit('avc1', box('avcC', bytes(1, 0x64, 0x00, 0x28, 0xff))))[0]?.codec, 'avc1.640028');
    assert.equal(tracksOfInit(videoInit('xxxx', Buffer.alloc(0)))[0]?.codec, undefined);
    assert.deepEqual(tracksOfInit(Buffer.from('not an mp4')), []);
  });
});

describe('EXT-X-STREAM-INF from the window', () => {
  test('measured values replace ffmpeg\'s, BANDWIDTH never below what was declared, other attributes kept', () => {
    const line = '#EXT-X-STREAM-INF:BANDWIDTH=73647,RESOLUTION=320x180,AUDIO="a"';
    assert.equal(
      streamInfWith(line, { peakBps: 690_760, averageBps: 400_001, codecs: 'avc1.640028,mp4a.40.2', resolution: { width: 1280, height: 720 }, frameRate: 25 }),
      '#EXT-X-STREAM-INF:BANDWIDTH=690760,AVERAGE-BANDWIDTH=400001,CODECS="avc1.640028,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=25.000,AUDIO="a"',
    );
    const transcoded = '#EXT-X-STREAM-INF:BANDWIDTH=3220800,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2"';
    assert.equal(streamInfWith(transcoded, { peakBps: 2_900_000, averageBps: 2_500_000 }), '#EXT-X-STREAM-INF:BANDWIDTH=3220800,AVERAGE-BANDWIDTH=2500000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720');
    assert.equal(streamInfWith(line, {}), '#EXT-X-STREAM-INF:BANDWIDTH=73647,RESOLUTION=320x180,AUDIO="a"', 'nothing measured yet: as written');
  });
});

describe('an index.m3u8 ffmpeg wrote without a variant', () => {
  test('stream copy of a pushed HLS source ("Bandwidth info not available"): the window\'s one media playlist becomes its variant once it holds a segment', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'playline-live-inf-'));
    try {
      const empty = '#EXTM3U\n#EXT-X-VERSION:7\n';
      const describer = new LiveStreamDescriber();
      assert.equal(await describer.describeIndex(dir, empty), empty, 'no media playlist yet: as written');
      await writeFile(join(dir, 'seg_main_1.m4s'), Buffer.alloc(25_000));
      await writeFile(join(dir, 'seg_main_2.m4s'), Buffer.alloc(50_000));
      await writeFile(join(dir, 'media_main.m3u8'), '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:1\n#EXTINF:2.000000,\nseg_main_1.m4s\n#EXTINF:2.000000,\nseg_main_2.m4s\n');
      assert.equal(await describer.describeIndex(dir, empty), '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-STREAM-INF:BANDWIDTH=200000,AVERAGE-BANDWIDTH=150000\nmedia_main.m3u8\n');
      const written = '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-STREAM-INF:BANDWIDTH=1\nmedia_main.m3u8\n';
      assert.equal(await describer.describeIndex(dir, written), written.replace('BANDWIDTH=1', 'BANDWIDTH=200000,AVERAGE-BANDWIDTH=150000'), 'an index with its variant is only described');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
