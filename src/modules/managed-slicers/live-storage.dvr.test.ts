import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../platform/clock.js';
import { liveDir } from '../../platform/media/media-layout.js';
import { LowLatencyWindow } from '../../platform/media/ll-hls-window.js';
import { LiveStorageMeter } from './live-storage.js';

test('a DVR window counts against the workspace storage quota like the live window: every byte it keeps, less as segments leave it', async () => {
  const root = mkdtempSync(join(tmpdir(), 'playline-dvr-quota-'));
  try {
    const clock = new FakeClock(Date.UTC(2026, 10, 28, 5, 0, 0));
    const dir = liveDir(root, 'ws-1', 'slicer-1');
    mkdirSync(dir, { recursive: true });
    const window = new LowLatencyWindow({ segmentTargetS: 2, partTargetS: 0.44, windowSegments: 3, maxSegmentBytes: 1 << 20, dvrWindowS: 20, dir, name: 'main', clock });
    const meter = new LiveStorageMeter(root, clock);
    const onDisk = () => readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
    await window.start({ bytes: Buffer.alloc(100), tracks: [] });
    const at = async (s: number) => {
      clock.advance(2000);
      await window.add({ bytes: Buffer.alloc(1000), startS: s, durationS: 2, independent: true });
    };
    for (let s = 0; s < 24; s += 2) await at(s);
    const full = await meter.bytes(undefined, 'ws-1');
    assert.equal(full, onDisk());
    assert.ok(full >= 10 * 1000 + 100, `20 s of segments (ten), the init segment and the last parts are counted: ${full}`);
    for (let s = 24; s < 60; s += 2) await at(s);
    clock.advance(2000);
    const slid = await meter.bytes(undefined, 'ws-1');
    assert.equal(slid, onDisk());
    assert.ok(slid < full + 2000 * 2, 'the window slid: its bytes stay about 20 s worth');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
