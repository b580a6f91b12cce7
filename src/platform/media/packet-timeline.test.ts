import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PacketTimeline, REORDER_WINDOW, packetTimeOf } from './packet-timeline.js';

/** ffprobe's `-show_entries packet=pts_time,dts_time -of csv=p=0` lines, fed as a stream. */
const scan = (lines: string[], origin?: number) => {
  const timeline = new PacketTimeline(origin);
  for (const line of lines) timeline.line(line);
  return timeline.finish();
};
const csv = (pts: number[], dtsOf: (i: number) => number | undefined = () => undefined) =>
  pts.map((p, i) => `${p.toFixed(6)},${dtsOf(i)?.toFixed(6) ?? 'N/A'}`);

test('a CSV line gives its pts, else its dts; N/A and blank lines are handled', () => {
  assert.deepEqual(packetTimeOf('0.080000,0.000000'), { time: 0.08 });
  assert.deepEqual(packetTimeOf('N/A,-0.040000'), { time: -0.04 });
  assert.deepEqual(packetTimeOf('N/A,N/A'), { time: undefined });
  assert.deepEqual(packetTimeOf('garbage'), { time: undefined });
  assert.equal(packetTimeOf(''), undefined);
  assert.equal(packetTimeOf('  '), undefined);
});

test('a normal 25 fps clip: every packet counted, the largest gap one frame', () => {
  const summary = scan([...csv(Array.from({ length: 250 }, (_, i) => i * 0.04)), '']);
  assert.equal(summary.packets, 250);
  assert.equal(summary.timed, 250);
  assert.equal(summary.firstS, 0);
  assert.ok(Math.abs((summary.lastS ?? 0) - 9.96) < 1e-9);
  assert.ok(summary.largestGap && Math.abs(summary.largestGap.lengthS - 0.04) < 1e-6, JSON.stringify(summary.largestGap));
});

test('B-frames: presentation times out of decode order are reordered before gaps are measured', () => {
  // An IBBBP pattern as x264 writes it (decode order: I P B B B ...; pts +2 frames ahead), with negative dts (MP4 edit list).
  const order = [0, 4, 2, 1, 3, 8, 6, 5, 7, 12, 10, 9, 11, 16, 14, 13, 15];
  const pts = order.map((f) => f * 0.04);
  const summary = scan(csv(pts, (i) => (i - 2) * 0.04));
  assert.equal(summary.packets, order.length);
  assert.ok(summary.largestGap && Math.abs(summary.largestGap.lengthS - 0.04) < 1e-6, `one frame, not the 0.16 s jump of pts in decode order: ${JSON.stringify(summary.largestGap)}`);
  // Measured naively in decode order, the same packets would show 0.16 s: the window is what makes it right.
  assert.ok(Math.max(...pts.slice(1).map((p, i) => p - (pts[i] ?? 0))) > 0.15);
  // A reorder as deep as the window (REORDER_WINDOW frames) still reads as one frame per step.
  const deep = [0, REORDER_WINDOW, ...Array.from({ length: REORDER_WINDOW - 1 }, (_, i) => i + 1), REORDER_WINDOW + 1].map((f) => f * 0.04);
  assert.ok(Math.abs((scan(csv(deep)).largestGap?.lengthS ?? 0) - 0.04) < 1e-6);
});

test('the timestamp gap of finding N7 is found with its position, B-frames or not, and before the first frame', () => {
  const sixty = Array.from({ length: 59 }, (_, i) => i / 60);
  const gap = scan(csv([...sixty, 7200]));
  assert.equal(gap.packets, 60);
  assert.ok(gap.largestGap);
  assert.equal(gap.largestGap.toS, 7200);
  assert.ok(Math.abs(gap.largestGap.fromS - 58 / 60) < 1e-6);
  // With B-frames, the frame after the gap may arrive before frames shown earlier.
  const reordered = scan(csv([0, 0.08, 0.04, 7200, 0.12, 7200.04]));
  assert.deepEqual(reordered.largestGap && [reordered.largestGap.fromS, reordered.largestGap.toS], [0.12, 7200]);
  // A first frame long after the file's start (another stream starts at 0).
  const late = scan(csv([3600, 3600.04]), 0);
  assert.deepEqual(late.largestGap, { fromS: 0, toS: 3600, lengthS: 3600 });
  assert.equal(late.firstS, 3600);
});

test('a slideshow (a frame every 10 s, with B-frames) has 10 s gaps, nothing longer', () => {
  // As ffprobe prints testsrc at rate 1/10 through x264 in MP4: decode order, pts ahead of dts.
  const summary = scan(['0.000000,-20.000000', '30.000000,-10.000000', '10.000000,0.000000', '20.000000,10.000000', '50.000000,20.000000', '40.000000,30.000000']);
  assert.equal(summary.packets, 6);
  assert.deepEqual(summary.largestGap, { fromS: 0, toS: 10, lengthS: 10 });
});

test('packets without any time are counted but make no gap; a jump back closes none; memory is the window', () => {
  const summary = scan(['N/A,N/A', '0.000000,N/A', 'N/A,N/A', '1.000000,N/A', '0.500000,N/A', '1.040000,N/A']);
  assert.equal(summary.packets, 6);
  assert.equal(summary.timed, 4);
  assert.deepEqual(summary.largestGap, { fromS: 0, toS: 0.5, lengthS: 0.5 });
  // A time much earlier than the window (a deep jump back) is no gap and does not pull the timeline back.
  const back = new PacketTimeline();
  for (let i = 0; i < 100; i++) back.add(100 + i * 0.04);
  for (let i = 0; i < 100; i++) back.add(i * 0.04);
  const after = back.finish();
  assert.ok(after.largestGap && after.largestGap.lengthS < 0.05, JSON.stringify(after.largestGap));
  assert.equal(after.packets, 200);
  // 500,000 packets go through without keeping them (the window only).
  const long = new PacketTimeline();
  for (let i = 0; i < 500_000; i++) long.add(i / 30);
  assert.equal(long.finish().packets, 500_000);
});
