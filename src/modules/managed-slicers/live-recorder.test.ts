import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../platform/clock.js';
import { LowLatencyWindow } from '../../platform/media/ll-hls-window.js';
import { liveDir, recordingsOfSlicer } from '../../platform/media/media-layout.js';
import { parsePackagedManifest } from '../../platform/media/packaged-manifest.js';
import type { MediaProcessResult } from '../../platform/media/media-process.js';
import { LiveRecorder, type FinishedRecording } from './live-recorder.js';

const OWNER = 'w1';
const SLICER = 's1';
const fragment = (startS: number) => ({ bytes: Buffer.from(`frag-${startS}`), startS, durationS: 0.4, independent: Math.abs(startS % 2) < 1e-9 });
const failedPoster: MediaProcessResult = { exitCode: 1, signal: null, aborted: false, spawnError: undefined, stdout: '', stderrTail: ['not media'] };

/** A slicer's live window (3 segments, no DVR) with a recorder on it, in a scratch media root. */
const setUp = (options: { mayGrow?: () => Promise<boolean>; mayAdd?: () => Promise<boolean> } = {}) => {
  const root = mkdtempSync(join(tmpdir(), 'playline-recorder-'));
  const clock = new FakeClock(Date.UTC(2026, 10, 28, 8, 0, 0));
  const dir = liveDir(root, OWNER, SLICER);
  mkdirSync(dir, { recursive: true });
  const adopted: FinishedRecording[] = [];
  const warnings: string[] = [];
  const recorderOf = () =>
    new LiveRecorder({
      mediaRoot: root, owner: OWNER, slicerId: SLICER, liveDir: dir, name: 'Keynote', clock,
      // The asset library takes the directory (a rename), as AssetFiles.adoptRecording does.
      sink: {
        unavailableReason: () => undefined,
        adopt: async (r) => {
          const target = join(root, 'library', String(adopted.length));
          mkdirSync(join(root, 'library'), { recursive: true });
          renameSync(r.dir, target);
          adopted.push({ ...r, dir: target });
          return { assetId: `asset-${adopted.length}` };
        },
        ...(options.mayAdd ? { mayAdd: options.mayAdd } : {}),
      },
      mayGrow: options.mayGrow ?? (() => Promise.resolve(true)),
      ffmpeg: 'ffmpeg',
      run: () => Promise.resolve(failedPoster),
      log: { info: () => undefined, warn: (obj, msg) => void warnings.push(`${msg} ${JSON.stringify(obj)}`) },
    });
  const recorder = recorderOf();
  const windowOf = (r: LiveRecorder) =>
    new LowLatencyWindow({ segmentTargetS: 2, partTargetS: 0.44, windowSegments: 3, maxSegmentBytes: 1 << 20, reconnectGraceMs: 30_000, dir, name: 'main', clock, onSegment: (s) => r.segment(s) });
  const push = async (window: LowLatencyWindow, from: number, to: number) => {
    for (let t = from; t < to - 1e-9; t = Math.round((t + 0.4) * 1000) / 1000) {
      clock.advance(400);
      await window.add(fragment(t));
    }
  };
  return { root, clock, dir, adopted, warnings, recorder, recorderOf, windowOf, push, done: () => rmSync(root, { recursive: true, force: true }) };
};

test('segments that left the live window stay recorded; an encoder back within the grace is the same recording, its second run a new period', async () => {
  const s = setUp();
  try {
    const window = s.windowOf(s.recorder);
    await window.start({ bytes: Buffer.from('init-1'), tracks: [] });
    await s.push(window, 0, 12);
    await window.end();
    s.clock.advance(3000);
    await window.start({ bytes: Buffer.from('init-2'), tracks: [] });
    await s.push(window, 0, 8);
    await window.end();
    assert.ok(readdirSync(s.dir).filter((f) => /^seg_main_\d+\.m4s$/.test(f)).length <= 4, 'the live window keeps only its last segments');
    assert.deepEqual(s.recorder.status(), { state: 'recording', reason: null });
    await s.recorder.finish();
    assert.equal(s.adopted.length, 1, 'one recording');
    const r = s.adopted[0] as FinishedRecording;
    const manifest = parsePackagedManifest(readFileSync(join(r.dir, 'manifest.json'), 'utf8'));
    const [main] = manifest.renditions;
    assert.ok(main);
    assert.equal(main.segments.length, 10, '6 segments of the first run, 4 of the second');
    assert.equal(manifest.duration_s, 20);
    assert.deepEqual(main.segments.map((seg) => seg.init ?? null), [null, null, null, null, null, null, 'main/init_1.mp4', null, null, null], 'the second run starts a new period with its own init segment');
    assert.equal(readFileSync(join(r.dir, 'main', 'init_0.mp4'), 'utf8'), 'init-1');
    assert.equal(readFileSync(join(r.dir, 'main', 'init_1.mp4'), 'utf8'), 'init-2');
    for (const seg of main.segments) assert.equal(readFileSync(join(r.dir, seg.uri)).length, seg.bytes, `${seg.uri} is recorded whole`);
    assert.equal(manifest.poster, undefined, 'no poster when ffmpeg cannot take one (logged)');
    assert.ok(s.warnings.some((w) => w.includes('poster')));
    assert.deepEqual([r.startedAt, r.durationMs, r.endedAt - r.startedAt >= 20_000], [Date.UTC(2026, 10, 28, 8, 0, 0), 20_000, true]);
    assert.ok(!readdirSync(r.dir).includes('journal.ndjson'), 'the journal is not part of the asset');
    assert.deepEqual(s.recorder.status(), { state: 'idle', reason: null });
  } finally {
    s.done();
  }
});

test('abuse: a recording stops at the workspace\'s storage quota (the live goes on, the reason shown) and keeps what it had', async () => {
  // Room for the first 7 s of the event (the recorder measures every 5 s of the ingest clock).
  let full = () => false;
  const s = setUp({ mayGrow: () => Promise.resolve(!full()) });
  const start = s.clock.now();
  full = () => s.clock.now() - start > 7000;
  try {
    const window = s.windowOf(s.recorder);
    await window.start({ bytes: Buffer.from('init-1'), tracks: [] });
    await s.push(window, 0, 20);
    await window.end();
    assert.equal(s.recorder.status().state, 'stopped');
    assert.match(s.recorder.status().reason ?? '', /storage quota/);
    assert.ok(readdirSync(s.dir).includes('media_main.m3u8'), 'the live window was written on');
    const recorded = readdirSync(join(recordingsOfSlicer(s.root, OWNER, SLICER), readdirSync(recordingsOfSlicer(s.root, OWNER, SLICER))[0] as string, 'main'));
    const kept = recorded.filter((f) => f.startsWith('seg_')).length;
    // Measured when the first segment closes, then 5 s later (as the 4th closes, past 7 s): full. Nothing after the 4th is kept.
    assert.equal(kept, 4, `nothing recorded past the quota (${kept} of 10 segments)`);
    await s.recorder.finish();
    assert.equal(s.adopted[0]?.durationMs, kept * 2000);
  } finally {
    s.done();
  }
});

test('issue 35: a recording counts in the asset quota: at the quota the event is not recorded (the live goes on, the reason shown); one already open is finished and kept', async () => {
  let room = false;
  const s = setUp({ mayAdd: () => Promise.resolve(room) });
  try {
    const window = s.windowOf(s.recorder);
    await window.start({ bytes: Buffer.from('init-1'), tracks: [] });
    await s.push(window, 0, 8);
    await window.end();
    assert.equal(s.recorder.status().state, 'stopped');
    assert.match(s.recorder.status().reason ?? '', /quota of assets \(PLAYLINE_QUOTA_ASSETS\)/);
    assert.ok(readdirSync(s.dir).includes('media_main.m3u8'), 'the live window was written on');
    await s.recorder.finish();
    assert.equal(s.adopted.length, 0, 'nothing recorded, no asset past the quota');

    // The next event, with room as it opens: recorded; the quota filling meanwhile does not cut it.
    room = true;
    const next = s.recorderOf();
    const again = s.windowOf(next);
    await again.start({ bytes: Buffer.from('init-2'), tracks: [] });
    await s.push(again, 0, 4);
    room = false;
    await s.push(again, 4, 8);
    await again.end();
    await next.finish();
    assert.equal(s.adopted.length, 1);
    assert.equal(s.adopted[0]?.durationMs, 8000, 'kept whole');
  } finally {
    s.done();
  }
});

test('a server killed during the event: the next start of the slicer finishes the recording from its journal', async () => {
  const s = setUp();
  try {
    const window = s.windowOf(s.recorder);
    await window.start({ bytes: Buffer.from('init-1'), tracks: [] });
    await s.push(window, 0, 6.4);
    // Killed: no end, no finish. A new process's recorder for the same slicer:
    const next = s.recorderOf();
    await next.recoverLeftovers();
    assert.equal(s.adopted.length, 1);
    assert.equal(s.adopted[0]?.durationMs, 6000, 'the three complete segments');
    assert.deepEqual(readdirSync(recordingsOfSlicer(s.root, OWNER, SLICER)), [], 'nothing left behind');
  } finally {
    s.done();
  }
});

test('an event without a complete segment makes no recording', async () => {
  const s = setUp();
  try {
    await s.recorder.finish();
    const window = s.windowOf(s.recorder);
    await window.start({ bytes: Buffer.from('init-1'), tracks: [] });
    await s.push(window, 0, 1.2);
    await s.recorder.finish();
    assert.equal(s.adopted.length, 0);
  } finally {
    s.done();
  }
});
