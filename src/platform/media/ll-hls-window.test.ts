import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, type types } from 'hls-parser';
import { FakeClock } from '../clock.js';
import { LowLatencyWindow } from './ll-hls-window.js';

const shape = { segmentTargetS: 2, partTargetS: 0.44, windowSegments: 3, maxSegmentBytes: 1 << 20 };
const fragment = (startS: number, durationS = 0.4, independent = Math.abs(startS % 2) < 1e-9) => ({ bytes: Buffer.from(`f${startS}`), startS, durationS, independent });

const windowIn = (clock = new FakeClock(Date.UTC(2026, 10, 28, 4, 0, 0))) => {
  const dir = mkdtempSync(join(tmpdir(), 'playline-ll-window-'));
  const window = new LowLatencyWindow({ ...shape, dir, name: 'main', clock });
  const playlist = () => parse(readFileSync(join(dir, 'media_main.m3u8'), 'utf8')) as types.MediaPlaylist;
  return { dir, window, clock, playlist, done: () => rmSync(dir, { recursive: true, force: true }) };
};

test('a fragment longer than the part target (a gap in the source): its segment lists no part, players read it whole', async () => {
  const w = windowIn();
  try {
    await w.window.start({ bytes: Buffer.from('init'), tracks: [] });
    for (const t of [0, 0.4, 0.8, 1.2, 1.6]) await w.window.add(fragment(t));
    await w.window.add(fragment(2));
    await w.window.add(fragment(2.4, 0.9));
    assert.ok(w.playlist().segments.every((s) => s.uri !== undefined && s.parts.every((p) => !p.hint)), 'the segment being written shows no part and no preload hint any more');
    await w.window.add(fragment(3.3, 0.7, false));
    await w.window.add(fragment(4));
    const [first, second] = w.playlist().segments;
    assert.equal(first?.parts.length, 5);
    assert.equal(second?.parts.length, 0);
    assert.equal(second?.duration, 2);
    const open = w.playlist().segments.at(-1);
    assert.equal(open?.parts.filter((p) => !p.hint).length, 1, 'the next segment has its parts again');
  } finally {
    w.done();
  }
});

test('program date-times: the earliest capture time the arrivals allow (ffmpeg\'s first fragments come in a burst), the same mapping for every segment', async () => {
  const w = windowIn();
  try {
    // Media time m is captured at C + m s; the first 2 s come at once at C + 2.5 s (ffmpeg probed its
    // input), then each 0.4 s fragment 0.5 s after its end was captured.
    const C = w.clock.now();
    const at = (ms: number) => w.clock.advance(C + ms - w.clock.now());
    await w.window.start({ bytes: Buffer.from('init'), tracks: [] });
    at(2500);
    for (const t of [0, 0.4, 0.8, 1.2, 1.6]) await w.window.add(fragment(t));
    for (let k = 5; k <= 15; k++) {
      at((0.4 * k + 0.4) * 1000 + 500);
      await w.window.add(fragment(0.4 * k));
    }
    const dates = w.playlist().segments.filter((s) => s.uri).map((s) => s.programDateTime?.getTime());
    assert.deepEqual(dates, [C + 500, C + 2500, C + 4500], 'capture time + the 0.5 s the pipeline took');
  } finally {
    w.done();
  }
});

test('parts are listed on the last three segments at most, short ones too (closed by the size bound)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'playline-ll-window-'));
  // Each fragment is 8 bytes: a segment is closed after two (0.8 s), each of them a keyframe.
  const window = new LowLatencyWindow({ ...shape, windowSegments: 6, maxSegmentBytes: 16, dir, name: 'main', clock: new FakeClock() });
  try {
    await window.start({ bytes: Buffer.from('init'), tracks: [] });
    for (let k = 0; k < 14; k++) await window.add({ bytes: Buffer.alloc(8), startS: k * 0.4, durationS: 0.4, independent: true });
    const segments = (parse(readFileSync(join(dir, 'media_main.m3u8'), 'utf8')) as types.MediaPlaylist).segments;
    assert.equal(segments.filter((s) => s.uri).length, 6);
    assert.deepEqual(segments.map((s) => s.parts.length > 0), [false, false, false, false, true, true, true], 'the last two complete ones and the one being written');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
