import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FfmpegProgressParser, percentOf, type FfmpegProgress } from './ffmpeg-progress.js';

test('one report per -progress block, out_time_ms read as microseconds as ffmpeg writes it', () => {
  const seen: FfmpegProgress[] = [];
  const parser = new FfmpegProgressParser((p) => seen.push(p));
  const output = [
    'frame=0', 'out_time_us=N/A', 'out_time_ms=N/A', 'progress=continue',
    'frame=50', 'out_time_ms=2000000', 'out_time=00:00:02.000000', 'speed=4x', 'progress=continue',
    'frame=100', 'out_time_us=4005333', 'out_time_ms=4005333', 'progress=end',
  ];
  for (const line of output) parser.line(line);
  assert.deepEqual(seen, [
    { outTimeUs: 0, done: false },
    { outTimeUs: 2_000_000, done: false },
    { outTimeUs: 4_005_333, done: true },
  ]);
});

test('garbage lines and going backwards never lower the time', () => {
  const seen: number[] = [];
  const parser = new FfmpegProgressParser((p) => seen.push(p.outTimeUs));
  for (const line of ['out_time_us=3000000', 'progress=continue', 'nonsense', '=x', 'out_time_us=-5', 'out_time_us=1000', 'progress=continue']) parser.line(line);
  assert.deepEqual(seen, [3_000_000, 3_000_000]);
});

test('percentOf is whole, clamped to 0-100, and 0 without a duration', () => {
  assert.equal(percentOf(2_000_000, 4), 50);
  assert.equal(percentOf(3_999_999, 4), 99);
  assert.equal(percentOf(9_000_000, 4), 100);
  assert.equal(percentOf(1_000_000, 0), 0);
});
