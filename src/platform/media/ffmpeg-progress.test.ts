import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FfmpegProgressParser, percentOf, type FfmpegProgress } from './ffmpeg-progress.js';

test('one report per -progress block, out_time_ms read as microseconds as ffmpeg writes it', () => {
  const seen: FfmpegProgress[] = [];
  const parser = new FfmpegProgressParser((p) => seen.push(p));
  const output = [
    'frame=0', 'total_size=N/A', 'out_time_us=N/A', 'out_time_ms=N/A', 'progress=continue',
    'frame=50', 'total_size=48', 'out_time_ms=2000000', 'out_time=00:00:02.000000', 'speed=4x', 'progress=continue',
    'frame=100', 'total_size=250000', 'out_time_us=4005333', 'out_time_ms=4005333', 'progress=end',
  ];
  for (const line of output) parser.line(line);
  assert.deepEqual(seen, [
    { outTimeUs: 0, totalSize: undefined, done: false },
    { outTimeUs: 2_000_000, totalSize: 48, done: false },
    { outTimeUs: 4_005_333, totalSize: 250_000, done: true },
  ]);
});

test('garbage lines and going backwards never lower the time or the size', () => {
  const seen: Array<[number, number | undefined]> = [];
  const parser = new FfmpegProgressParser((p) => seen.push([p.outTimeUs, p.totalSize]));
  const lines = [
    'out_time_us=3000000', 'total_size=9000', 'progress=continue',
    'nonsense', '=x', 'out_time_us=-5', 'out_time_us=1000', 'total_size=-1', 'total_size=12', 'total_size=N/A', 'progress=continue',
  ];
  for (const line of lines) parser.line(line);
  assert.deepEqual(seen, [[3_000_000, 9000], [3_000_000, 9000]]);
});

test('percentOf is whole, clamped to 0-100, and 0 without a duration', () => {
  assert.equal(percentOf(2_000_000, 4), 50);
  assert.equal(percentOf(3_999_999, 4), 99);
  assert.equal(percentOf(9_000_000, 4), 100);
  assert.equal(percentOf(1_000_000, 0), 0);
});
