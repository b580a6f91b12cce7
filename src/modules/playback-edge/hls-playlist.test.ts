import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assetDurationS, planAsset, planEvent, renderPlaylist, type PlaylistPlan } from './hls-playlist.js';
import { PlaybackFailure } from './playback-failure.js';
import { parseDuration, parsePlaybackOptions } from './playback-params.js';

const codeOf = (value: unknown) => (value instanceof PlaybackFailure ? value.errorCode : null);
const plan = (value: PlaylistPlan | PlaybackFailure): PlaylistPlan => {
  assert.ok(!(value instanceof PlaybackFailure), value instanceof PlaybackFailure ? value.message : '');
  return value;
};

test('asset lengths are fixed per id and between 30 s and 15 min', () => {
  assert.equal(assetDurationS('abc'), assetDurationS('abc'));
  for (const id of ['a', 'b', 'movie-1', 'x'.repeat(200)]) assert.ok(assetDurationS(id) >= 30 && assetDurationS(id) <= 900);
});

test('optional parameters: each malformed one maps to its code', () => {
  const cases: Array<[string, string, number]> = [
    ['dur', '0', 100], ['dur', '1:75', 100], ['ts', '-1', 115], ['delay', '86401', 116], ['minDur', '31', 117],
    ['targetDur', '0', 118], ['stopOffset', 'x', 123], ['sliceStart', '1e3', 124], ['sliceStop', '0', 125],
    ['startseg', '1.0', 126], ['pbs', 'short', 128], ['hlsver', '8', 129], ['hlsver', 'three', 129], ['kv', '0', 120],
  ];
  for (const [name, value, code] of cases) assert.equal(codeOf(parsePlaybackOptions(new Map([[name, value]]))), code, `${name}=${value}`);
  assert.deepEqual(parsePlaybackOptions(new Map([['dur', '1:02:03'], ['pbs', 'abcdefgh'], ['hlsver', '4']])), { durationS: 3723, session: 'abcdefgh', hlsVersion: 4 });
  assert.deepEqual([parseDuration('90'), parseDuration('01:30'), parseDuration('0:00')], [90, 90, undefined]);
});

test('asset plans: slices, stop offset and start segment are checked against the content', () => {
  assert.equal(codeOf(planAsset(60, { sliceStartS: 60 })), 124);
  assert.equal(codeOf(planAsset(60, { sliceStartS: 10, sliceStopS: 10 })), 125);
  assert.equal(codeOf(planAsset(60, { sliceStopS: 61 })), 125);
  assert.equal(codeOf(planAsset(60, { stopOffsetS: 60 })), 123);
  assert.equal(codeOf(planAsset(60, { startSegment: 10 })), 126);
  assert.equal(codeOf(planAsset(60, { minSegmentS: 7 })), 117);
  const p = plan(planAsset(62, { stopOffsetS: 5, targetDurationS: 10 }));
  assert.deepEqual(p.segments, [10, 10, 10, 10, 10, 7]);
  assert.deepEqual(plan(planAsset(62, { targetDurationS: 10, minSegmentS: 3 })).segments, [10, 10, 10, 10, 10, 10]);
});

test('event plans: a sliding window behind the live edge', () => {
  const now = Date.UTC(2026, 10, 21, 10, 0, 0);
  const nowS = now / 1000;
  assert.equal(codeOf(planEvent(now, { startTs: nowS + 1 })), 115);
  const early = plan(planEvent(now, { startTs: nowS - 3 }));
  assert.deepEqual([early.mediaSequence, early.segments.length], [0, 1]);
  const p = plan(planEvent(now, { startTs: nowS - 120, delayS: 0, targetDurationS: 4 }));
  assert.deepEqual([p.mediaSequence, p.segments.length, p.programDateTime], [25, 5, (nowS - 120 + 100) * 1000]);
});

test('rendering: header, preroll with a discontinuity, segments, end list', () => {
  const text = renderPlaylist({ version: 4, targetDurationS: 6, mediaSequence: 3, segments: [6, 2.5], live: false }, '/s/a', [{ id: 'ad-1', durationS: 7.2 }]);
  assert.equal(
    text,
    ['#EXTM3U', '#EXT-X-VERSION:4', '#EXT-X-TARGETDURATION:8', '#EXT-X-MEDIA-SEQUENCE:3', '#EXT-X-PLAYLIST-TYPE:VOD',
      '#EXTINF:7.200,', '/ads/ad-1.ts', '#EXT-X-DISCONTINUITY', '#EXTINF:6.000,', '/s/a/3.ts', '#EXTINF:2.500,', '/s/a/4.ts', '#EXT-X-ENDLIST', ''].join('\n'),
  );
});
