import { failure, type PlaybackFailure } from './playback-failure.js';
import type { PlaybackOptions } from './playback-params.js';
import type { SessionPlan } from './session-token.js';

/** The part of a rendition's segment list a session plays: indexes `[first, end)`. */
export interface SegmentRange {
  first: number;
  end: number;
  /** EXT-X-MEDIA-SEQUENCE: `startseg` (the index within the planned list), 0 without it. */
  mediaSequence: number;
}

/** EXT-X-TARGETDURATION for segments of these durations (each EXTINF rounds to at most it). */
export const targetDurationOf = (durations: Iterable<number>): number => {
  let target = 1;
  // The millisecond of slack keeps 4.0000001 s (float noise in a manifest) at 4.
  for (const d of durations) target = Math.max(target, Math.ceil(d - 0.001));
  return target;
};

const bad = (code: number, message: string) => failure(code, 400, message);

/**
 * Applies a playback URL's options to a packaged rendition's real segments: the slice
 * (`sliceStart`, `sliceStop`), `stopOffset` and `dur` choose the seconds to play, and the
 * segments overlapping them are played whole (segments are cut at keyframes: a slice starts at
 * the segment holding its first second); `minDur` drops a final segment of which less than that
 * falls inside the slice; `startseg` skips that many planned segments and becomes the media
 * sequence. `targetDur` can only raise EXT-X-TARGETDURATION (see renderVariant).
 */
export function planSegments(durations: readonly number[], contentS: number, o: SessionPlan): SegmentRange | PlaybackFailure {
  const longest = targetDurationOf(durations);
  if (o.minSegmentS !== undefined && o.minSegmentS > (o.targetDurationS ?? longest)) {
    return bad(117, `minDur must not exceed targetDur (${o.targetDurationS ?? longest})`);
  }
  const start = o.sliceStartS ?? 0;
  if (start >= contentS) return bad(124, `sliceStart must be before the end of the content (${contentS} s)`);
  let stop = o.sliceStopS ?? contentS;
  if (stop > Math.ceil(contentS) || stop <= start) return bad(125, `sliceStop must be after sliceStart and at most ${Math.ceil(contentS)} s`);
  stop = Math.min(stop, contentS);
  if (o.stopOffsetS !== undefined) {
    stop = Math.min(stop, contentS - o.stopOffsetS);
    if (stop <= start) return bad(123, 'stopOffset leaves nothing to play');
  }
  if (o.durationS !== undefined) stop = Math.min(stop, start + o.durationS);

  let first = -1;
  let end = 0;
  let lastInside = 0;
  let at = 0;
  for (let i = 0; i < durations.length && at < stop; i++) {
    const d = durations[i] as number;
    if (at + d > start) {
      if (first < 0) first = i;
      end = i + 1;
      lastInside = Math.min(at + d, stop) - Math.max(at, start);
    }
    at += d;
  }
  if (first < 0) return bad(124, `sliceStart must be before the end of the content (${contentS} s)`);
  if (end - first > 1 && o.minSegmentS !== undefined && lastInside < o.minSegmentS) end -= 1;
  const skip = o.startSegment ?? 0;
  if (skip >= end - first) return bad(126, `startseg must be below the segment count (${end - first})`);
  return { first: first + skip, end, mediaSequence: skip };
}

/**
 * The live event checks the edge can make before any live output exists: `minDur` within
 * `targetDur` (117) and a timeline that does not start in the future (115).
 */
export function checkEventWindow(nowMs: number, o: PlaybackOptions): PlaybackFailure | undefined {
  if (o.minSegmentS !== undefined && o.targetDurationS !== undefined && o.minSegmentS > o.targetDurationS) {
    return bad(117, `minDur must not exceed targetDur (${o.targetDurationS})`);
  }
  if ((o.startTs ?? 0) > Math.floor(nowMs / 1000)) return bad(115, 'ts must not be in the future');
  return undefined;
}

/** The plan options a session token carries (the URL's list-shaping parameters). */
export const sessionPlanOf = (o: PlaybackOptions): SessionPlan => {
  const plan: SessionPlan = {};
  if (o.durationS !== undefined) plan.durationS = o.durationS;
  if (o.minSegmentS !== undefined) plan.minSegmentS = o.minSegmentS;
  if (o.targetDurationS !== undefined) plan.targetDurationS = o.targetDurationS;
  if (o.stopOffsetS !== undefined) plan.stopOffsetS = o.stopOffsetS;
  if (o.sliceStartS !== undefined) plan.sliceStartS = o.sliceStartS;
  if (o.sliceStopS !== undefined) plan.sliceStopS = o.sliceStopS;
  if (o.startSegment !== undefined) plan.startSegment = o.startSegment;
  if (o.hlsVersion !== undefined) plan.hlsVersion = o.hlsVersion;
  return plan;
};
