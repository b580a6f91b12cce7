import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../platform/clock.js';
import { liveDir } from '../../platform/media/media-layout.js';
import { LowLatencyWindow } from '../../platform/media/ll-hls-window.js';
import { LiveStorageMeter, LiveStorageRoom } from './live-storage.js';

const MB = 1_000_000;

test('at the storage quota a DVR window trims its tail instead of growing: live storage stays within the quota while the event goes on (issue 35 finding 4)', async () => {
  const root = mkdtempSync(join(tmpdir(), 'playline-dvr-room-'));
  try {
    const clock = new FakeClock(Date.UTC(2026, 11, 1, 22, 0, 0));
    const dir = liveDir(root, 'ws-1', 'slicer-1');
    mkdirSync(dir, { recursive: true });
    const meter = new LiveStorageMeter(root, clock);
    const limit = 20 * MB;
    const room = new LiveStorageRoom(async (owner) => {
      meter.forget(owner);
      return meter.bytes(undefined, owner);
    }, limit, clock);
    // A two-hour DVR window: without the quota it would keep every segment of this test.
    const window = new LowLatencyWindow({ segmentTargetS: 2, partTargetS: 0.44, windowSegments: 3, maxSegmentBytes: 4 * MB, dvrWindowS: 7200, dir, name: 'main', clock, mayGrow: room.mayGrow('ws-1') });
    const onDisk = () => readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
    await window.start({ bytes: Buffer.alloc(1000), tracks: [] });
    let peak = 0;
    const listed = () => (readFileSync(join(dir, window.playlistFile), 'utf8').match(/^seg_main_(\d+)\.m4s$/gm) ?? []).map((uri) => Number(/(\d+)/.exec(uri)?.[1]));
    let first: number | undefined;
    // 2 min at 2 MB/s (a 500 KB segment every 2 s... of 1 MB here: 60 segments, 60 MB pushed).
    for (let s = 0; s < 120; s += 2) {
      clock.advance(2000);
      await window.add({ bytes: Buffer.alloc(MB / 2), startS: s, durationS: 1, independent: true });
      await window.add({ bytes: Buffer.alloc(MB / 2), startS: s + 1, durationS: 1, independent: false });
      await room.settled('ws-1');
      peak = Math.max(peak, onDisk());
      first ??= listed()[0];
    }
    clock.advance(2000);
    await window.add({ bytes: Buffer.alloc(1000), startS: 120, durationS: 1, independent: true });
    assert.ok(peak <= limit, `the live folder reached ${peak} bytes of a ${limit}-byte quota`);
    assert.ok((await meter.bytes(undefined, 'ws-1')) <= limit, 'the usage reads within the quota');
    const msns = listed();
    assert.equal(msns.at(-1), (first ?? Number.NaN) + 59, 'the live edge moved on to the last segment: the event goes on');
    assert.ok(msns.length >= 3, 'the short window is kept');
    assert.ok(msns.length < 60, `the DVR tail was trimmed (${msns.length} segments listed)`);
    assert.ok(peak >= limit / 2, `the DVR tail used the room there was (${peak})`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
