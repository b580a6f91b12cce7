import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify, type types } from 'hls-parser';
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

const dvrWindowIn = (options: { dvrWindowS?: number; reconnectGraceMs?: number; windowSegments?: number }) => {
  const clock = new FakeClock(Date.UTC(2026, 10, 28, 4, 0, 0));
  const dir = mkdtempSync(join(tmpdir(), 'playline-ll-dvr-'));
  const window = new LowLatencyWindow({ ...shape, ...options, dir, name: 'main', clock });
  const text = () => readFileSync(join(dir, 'media_main.m3u8'), 'utf8');
  const playlist = () => parse(text()) as types.MediaPlaylist;
  /** Media [from, to) in 0.4 s fragments, each arriving as it ends (the clock follows). */
  const push = async (from: number, to: number) => {
    for (let t = from; t < to - 1e-9; t = Math.round((t + 0.4) * 1000) / 1000) {
      clock.advance(400);
      await window.add(fragment(t));
    }
  };
  /** Every file the playlist names (segments, listed parts, init segments), and every media file on disk. */
  const files = () => {
    const p = playlist();
    const named = new Set<string>();
    for (const s of p.segments) {
      if (s.uri) named.add(s.uri);
      if (s.map) named.add(s.map.uri);
      for (const part of s.parts) if (!part.hint) named.add(part.uri);
    }
    const onDisk = readdirSync(dir).filter((f) => !f.startsWith('.') && !f.endsWith('.m3u8'));
    return { named, onDisk };
  };
  return { dir, window, clock, text, playlist, push, files, done: () => rmSync(dir, { recursive: true, force: true }) };
};

test('DVR window: segments are kept for dvrWindowS behind the edge, then deleted as they leave; parts only near the edge; files on disk = what the playlist lists', async () => {
  const w = dvrWindowIn({ dvrWindowS: 20 });
  try {
    await w.window.start({ bytes: Buffer.from('init'), tracks: [] });
    await w.push(0, 60.4);
    const p = w.playlist();
    const whole = p.segments.filter((s) => s.uri);
    assert.equal(whole.length, 10, '20 s of 2 s segments');
    assert.equal(whole[0]?.uri, `seg_main_${p.mediaSequenceBase}.m4s`, 'MEDIA-SEQUENCE is the first listed segment');
    assert.equal(whole.at(-1)?.mediaSequenceNumber, (p.mediaSequenceBase ?? 0) + 9);
    assert.equal(p.playlistType, undefined, 'a sliding window: no PLAYLIST-TYPE');
    assert.doesNotMatch(w.text(), /EXT-X-PLAYLIST-TYPE|EXT-X-ENDLIST/);
    assert.ok(p.segments.filter((s) => s.parts.length > 0).length <= 3, 'parts on the last three segments at most');
    const { named, onDisk } = w.files();
    const segmentsOnDisk = onDisk.filter((f) => /^seg_main_\d+\.m4s$/.test(f));
    assert.deepEqual(segmentsOnDisk.sort(), whole.map((s) => s.uri).sort(), 'segment files on disk = the segments listed');
    for (const f of named) assert.ok(onDisk.includes(f), `${f} is listed and on disk`);
    const partsOnDisk = onDisk.filter((f) => /_p\d+\.m4s$/.test(f));
    const partOwners = new Set(partsOnDisk.map((f) => f.replace(/_p\d+\.m4s$/, '.m4s')));
    assert.ok(partOwners.size <= shape.windowSegments + 1, `parts kept for the short window only (${partOwners.size} segments have part files)`);
    // The DVR window is the same playlist hls-parser would write whole.
    assert.equal(p.segments[0]?.map?.uri, 'init_main.mp4');
    assert.equal(w.text().match(/#EXT-X-MAP/g)?.length, 1, 'one EXT-X-MAP for one run');
  } finally {
    w.done();
  }
});

test('DVR 0: today\'s short window (windowSegments)', async () => {
  const w = dvrWindowIn({ dvrWindowS: 0 });
  try {
    await w.window.start({ bytes: Buffer.from('init'), tracks: [] });
    await w.push(0, 30.4);
    assert.equal(w.playlist().segments.filter((s) => s.uri).length, shape.windowSegments);
    assert.equal(w.files().onDisk.filter((f) => /^seg_main_\d+\.m4s$/.test(f)).length, shape.windowSegments);
  } finally {
    w.done();
  }
});

test('encoder drop-out within the grace: the same playlist goes on after EXT-X-DISCONTINUITY (sequence continued, nothing deleted, its own init segment)', async () => {
  const w = dvrWindowIn({ dvrWindowS: 60, reconnectGraceMs: 30_000 });
  try {
    await w.window.start({ bytes: Buffer.from('init-1'), tracks: [] });
    await w.push(0, 6.4);
    const before = w.playlist();
    await w.window.end();
    w.clock.advance(3000);
    assert.equal(w.window.withinGrace(), true);
    await w.window.start({ bytes: Buffer.from('init-2'), tracks: [] });
    // ffmpeg's new run starts its timestamps again.
    await w.push(0, 6.4);
    const p = w.playlist();
    assert.equal(p.mediaSequenceBase, before.mediaSequenceBase, 'the same playlist');
    const whole = p.segments.filter((s) => s.uri);
    const msns = whole.map((s) => s.mediaSequenceNumber);
    assert.deepEqual(msns, msns.map((_, i) => (msns[0] as number) + i), 'media sequence numbers continue');
    assert.equal(w.text().match(/#EXT-X-DISCONTINUITY\n/g)?.length, 1, 'one discontinuity');
    const at = p.segments.findIndex((s) => s.discontinuity);
    assert.equal(at, 4, 'the first segment of the second run (0-2, 2-4, 4-6, 6-6.4 before)');
    assert.notEqual(p.segments[at]?.map?.uri, p.segments[0]?.map?.uri, 'the new run names its own init segment');
    assert.equal(readFileSync(join(w.dir, p.segments[0]?.map?.uri as string), 'utf8'), 'init-1', 'the first run\'s init segment is kept');
    const dates = p.segments.map((s) => s.programDateTime?.getTime() as number);
    assert.ok(dates.every((d, i) => i === 0 || d > (dates[i - 1] as number)), 'program date-times move forward across the gap');
    const { named, onDisk } = w.files();
    for (const f of named) assert.ok(onDisk.includes(f), `${f} is listed and on disk`);
    assert.ok(!/EXT-X-DISCONTINUITY-SEQUENCE/.test(w.text()), 'no discontinuity left the window yet');
  } finally {
    w.done();
  }
});

test('the encoder gone: the playlist lists no part (hls.js reads a last complete segment under parts as the next one continuing, which a reconnect would contradict); back: parts again', async () => {
  const w = dvrWindowIn({ dvrWindowS: 60, reconnectGraceMs: 30_000 });
  try {
    await w.window.start({ bytes: Buffer.from('init-1'), tracks: [] });
    await w.push(0, 6.4);
    assert.ok(w.playlist().segments.some((s) => s.parts.length > 0), 'parts while the run goes on');
    await w.window.end();
    assert.ok(w.playlist().segments.every((s) => s.parts.length === 0 && s.uri), 'no part, no preload hint: only complete segments');
    assert.ok(!/#EXT-X-PART:|#EXT-X-PRELOAD-HINT/.test(w.text()));
    w.clock.advance(3000);
    await w.window.start({ bytes: Buffer.from('init-2'), tracks: [] });
    await w.push(0, 2.4);
    assert.ok(/#EXT-X-PART:/.test(w.text()), 'parts again once media comes back');
  } finally {
    w.done();
  }
});

test('a discontinuity sliding out of the DVR window: EXT-X-DISCONTINUITY-SEQUENCE counts it, the first run\'s init segment goes', async () => {
  const w = dvrWindowIn({ dvrWindowS: 10, reconnectGraceMs: 30_000 });
  try {
    await w.window.start({ bytes: Buffer.from('init-1'), tracks: [] });
    await w.push(0, 4.4);
    await w.window.end();
    w.clock.advance(2000);
    await w.window.start({ bytes: Buffer.from('init-2'), tracks: [] });
    await w.push(0, 30.4);
    const p = w.playlist();
    assert.equal(p.discontinuitySequenceBase, 1);
    assert.ok(p.segments.every((s) => !s.discontinuity));
    assert.ok(!readdirSync(w.dir).includes('init_main.mp4'), 'the first run\'s init segment left with its segments');
    const { named, onDisk } = w.files();
    assert.deepEqual([...named].filter((f) => !f.includes('_p')).sort(), onDisk.filter((f) => !f.includes('_p')).sort(), 'files on disk = what the playlist lists');
  } finally {
    w.done();
  }
});

test('past the grace: the next run starts a new playlist numbered past the last and deletes the last one\'s files', async () => {
  const w = dvrWindowIn({ dvrWindowS: 60, reconnectGraceMs: 30_000 });
  try {
    await w.window.start({ bytes: Buffer.from('init-1'), tracks: [] });
    await w.push(0, 6.4);
    const last = w.playlist().segments.filter((s) => s.uri).at(-1)?.mediaSequenceNumber as number;
    await w.window.end();
    w.clock.advance(30_001);
    assert.equal(w.window.withinGrace(), false);
    await w.window.start({ bytes: Buffer.from('init-2'), tracks: [] });
    await w.push(0, 4.4);
    const p = w.playlist();
    assert.ok((p.mediaSequenceBase as number) > last, 'numbered past the last playlist');
    assert.ok(p.segments.every((s) => !s.discontinuity), 'a new playlist, no discontinuity');
    assert.equal(p.segments[0]?.map?.uri, 'init_main.mp4');
    const { named, onDisk } = w.files();
    assert.deepEqual(onDisk.filter((f) => /^seg_main_\d+\.m4s$/.test(f)).sort(), [...named].filter((f) => /^seg_main_\d+\.m4s$/.test(f)).sort(), 'the last run\'s segments are gone');
  } finally {
    w.done();
  }
});

test('a long DVR window: the settled segments are written from cached lines, a playlist hls-parser reads the same as the one it writes', async () => {
  const w = dvrWindowIn({ dvrWindowS: 600, reconnectGraceMs: 30_000 });
  // One 2 s fragment a segment (no parts listed): 300 segments quickly.
  const whole = async (from: number, to: number) => {
    for (let t = from; t < to; t += 2) {
      w.clock.advance(2000);
      await w.window.add(fragment(t, 2, true));
    }
  };
  try {
    await w.window.start({ bytes: Buffer.from('init-1'), tracks: [] });
    await whole(0, 300);
    await w.window.end();
    w.clock.advance(3000);
    await w.window.start({ bytes: Buffer.from('init-2'), tracks: [] });
    await whole(0, 304);
    const text = w.text();
    const p = parse(text) as types.MediaPlaylist;
    const listed = p.segments.filter((s) => s.uri);
    assert.equal(listed.length, 300, '600 s of 2 s segments');
    assert.deepEqual(listed.map((s) => s.mediaSequenceNumber), listed.map((_, i) => (p.mediaSequenceBase as number) + i));
    assert.ok(listed.every((s) => s.duration === 2 && s.uri === `seg_main_${s.mediaSequenceNumber}.m4s`));
    const dates = listed.map((s) => s.programDateTime?.getTime() as number);
    assert.ok(dates.every((d, i) => i === 0 || d - (dates[i - 1] as number) === (listed[i]?.discontinuity ? 5000 : 2000)), 'one date a segment, the 3 s gap at the discontinuity');
    const cut = listed.findIndex((s) => s.discontinuity);
    assert.equal(cut, 149, 'the second run closed 151 segments (its 152nd is being written)');
    assert.equal(text.match(/#EXT-X-MAP/g)?.length, 2, 'EXT-X-MAP where the init segment changes only');
    assert.equal(listed[cut - 1]?.map?.uri, 'init_main.mp4');
    assert.equal(listed[cut]?.map?.uri, `init_main_${listed[cut]?.mediaSequenceNumber}.mp4`);
    // The same window written whole by hls-parser.
    assert.equal(stringify(p).replace(/#EXT-X-KEY:METHOD=undefined.*\n/g, ''), text);
  } finally {
    w.done();
  }
});
