import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PlaybackFailure } from './playback-failure.js';
import { checkEventWindow, planSegments, targetDurationOf, type SegmentRange } from './segment-plan.js';

const codeOf = (x: SegmentRange | PlaybackFailure | undefined) => (x instanceof PlaybackFailure ? x.errorCode : 0);
const range = (x: SegmentRange | PlaybackFailure) => {
  assert.ok(!(x instanceof PlaybackFailure), x instanceof PlaybackFailure ? x.message : '');
  return x;
};
// 10 segments: 4 s each, except a 2.5 s tail (38.5 s).
const durations = [...Array.from({ length: 9 }, () => 4), 2.5];

test('without options every segment plays, from media sequence 0', () => {
  assert.deepEqual(planSegments(durations, 38.5, {}), { first: 0, end: 10, mediaSequence: 0 });
});

test('a slice plays the segments overlapping it, whole; dur and stopOffset end it earlier', () => {
  assert.deepEqual(range(planSegments(durations, 38.5, { sliceStartS: 8, sliceStopS: 20 })), { first: 2, end: 5, mediaSequence: 0 });
  assert.deepEqual(range(planSegments(durations, 38.5, { sliceStartS: 9, sliceStopS: 21 })), { first: 2, end: 6, mediaSequence: 0 }, 'from the segment holding 9 s to the one holding 20-21 s');
  assert.deepEqual(range(planSegments(durations, 38.5, { durationS: 10 })), { first: 0, end: 3, mediaSequence: 0 });
  assert.deepEqual(range(planSegments(durations, 38.5, { stopOffsetS: 3 })), { first: 0, end: 9, mediaSequence: 0 }, '35.5 s: the 2.5 s tail is cut');
});

test('minDur drops a final segment of which less than that is inside; startseg skips planned segments and is the media sequence', () => {
  // 8..30 s: segments 2..7, the last holding 28-30 s (2 s inside): dropped under minDur 3.
  assert.deepEqual(range(planSegments(durations, 38.5, { sliceStartS: 8, sliceStopS: 30, minSegmentS: 3 })), { first: 2, end: 7, mediaSequence: 0 });
  assert.deepEqual(range(planSegments(durations, 38.5, { sliceStartS: 8, sliceStopS: 30, minSegmentS: 2 })), { first: 2, end: 8, mediaSequence: 0 });
  assert.deepEqual(range(planSegments(durations, 38.5, { sliceStartS: 8, startSegment: 2 })), { first: 4, end: 10, mediaSequence: 2 });
  assert.deepEqual(range(planSegments([4], 4, { minSegmentS: 4, durationS: 1 })), { first: 0, end: 1, mediaSequence: 0 }, 'a single segment is never dropped');
});

test('each impossible option has its playback error code', () => {
  assert.equal(codeOf(planSegments(durations, 38.5, { minSegmentS: 5 })), 117, 'minDur above the segments\' target (4)');
  assert.equal(codeOf(planSegments(durations, 38.5, { minSegmentS: 5, targetDurationS: 6 })), 0);
  assert.equal(codeOf(planSegments(durations, 38.5, { minSegmentS: 7, targetDurationS: 6 })), 117);
  assert.equal(codeOf(planSegments(durations, 38.5, { stopOffsetS: 39 })), 123);
  assert.equal(codeOf(planSegments(durations, 38.5, { sliceStartS: 39 })), 124);
  assert.equal(codeOf(planSegments(durations, 38.5, { sliceStartS: 10, sliceStopS: 10 })), 125);
  assert.equal(codeOf(planSegments(durations, 38.5, { sliceStopS: 40 })), 125);
  assert.equal(codeOf(planSegments(durations, 38.5, { sliceStopS: 39 })), 0, 'the last partial second may be named');
  assert.equal(codeOf(planSegments(durations, 38.5, { startSegment: 10 })), 126);
  assert.equal(codeOf(planSegments(durations, 38.5, { sliceStartS: 30, startSegment: 3 })), 126);
});

test('target durations and live event checks', () => {
  assert.equal(targetDurationOf([4, 4.0004, 2]), 4);
  assert.equal(targetDurationOf([4.2]), 5);
  const now = Date.UTC(2026, 10, 21, 10);
  assert.equal(codeOf(checkEventWindow(now, { startTs: now / 1000 + 1 })), 115);
  assert.equal(codeOf(checkEventWindow(now, { minSegmentS: 7, targetDurationS: 6 })), 117);
  assert.equal(checkEventWindow(now, { startTs: now / 1000 - 600, delayS: 30 }), undefined);
});
