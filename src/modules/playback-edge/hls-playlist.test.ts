import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse, types } from 'hls-parser';
import { hlsVersionOf, renderMultivariant, renderVariant } from './hls-playlist.js';

test('a variant playlist: each part with its own EXT-X-MAP, a discontinuity between them, targets covering every segment', () => {
  const text = renderVariant({
    version: 7,
    mediaSequence: 2,
    parts: [
      { map: '../a/0/360p/init.mp4', segments: [{ uri: '../a/0/360p/seg_00000.m4s', durationS: 6.006 }] },
      { map: '../c/360p/init.mp4', segments: [{ uri: '../c/360p/seg_00002.m4s', durationS: 4 }, { uri: '../c/360p/seg_00003.m4s', durationS: 1.5 }] },
    ],
  });
  const playlist = parse(text);
  assert.ok(playlist instanceof types.MediaPlaylist);
  assert.deepEqual([playlist.version, playlist.targetDuration, playlist.mediaSequenceBase, playlist.playlistType, playlist.endlist], [7, 7, 2, 'VOD', true]);
  assert.deepEqual(playlist.segments.map((s) => [s.uri, s.duration, s.map.uri, s.discontinuity ?? false]), [
    ['../a/0/360p/seg_00000.m4s', 6.006, '../a/0/360p/init.mp4', false],
    ['../c/360p/seg_00002.m4s', 4, '../c/360p/init.mp4', true],
    ['../c/360p/seg_00003.m4s', 1.5, '../c/360p/init.mp4', false],
  ]);
  assert.match(text, /^#EXTINF:6\.006,$/m);
});

test('targetDur only raises the target duration; hlsver below 6 is raised to 6 (EXT-X-MAP needs it)', () => {
  const parts = [{ map: 'i.mp4', segments: [{ uri: 's.m4s', durationS: 4.0000001 }] }];
  assert.match(renderVariant({ version: 7, mediaSequence: 0, parts }), /^#EXT-X-TARGETDURATION:4$/m, 'float noise does not round up');
  assert.match(renderVariant({ version: 7, mediaSequence: 0, parts, targetDurationS: 10 }), /^#EXT-X-TARGETDURATION:10$/m);
  assert.match(renderVariant({ version: 7, mediaSequence: 0, parts, targetDurationS: 2 }), /^#EXT-X-TARGETDURATION:4$/m);
  assert.deepEqual([hlsVersionOf(undefined), hlsVersionOf(3), hlsVersionOf(6), hlsVersionOf(7)], [7, 6, 6, 7]);
});

test('a multivariant playlist: one stream per rendition with bandwidth, codecs and resolution', () => {
  const text = renderMultivariant(7, [
    { uri: 's/tok/v/720p.m3u8', bandwidth: 2_500_000, averageBandwidth: 2_000_000, codecs: 'avc1.64001f,mp4a.40.2', width: 1280, height: 720 },
    { uri: 's/tok/v/360p.m3u8', bandwidth: 900_000, averageBandwidth: 700_000, codecs: 'avc1.64001e,mp4a.40.2', width: 640, height: 360 },
  ]);
  const playlist = parse(text);
  assert.ok(playlist instanceof types.MasterPlaylist);
  assert.equal(playlist.independentSegments, true);
  assert.deepEqual(playlist.variants.map((v) => [v.uri, v.bandwidth, v.averageBandwidth, v.codecs, v.resolution?.width, v.resolution?.height]), [
    ['s/tok/v/720p.m3u8', 2_500_000, 2_000_000, 'avc1.64001f,mp4a.40.2', 1280, 720],
    ['s/tok/v/360p.m3u8', 900_000, 700_000, 'avc1.64001e,mp4a.40.2', 640, 360],
  ]);
});
