import { failure, type PlaybackFailure } from './playback-failure.js';
import type { PlaybackOptions } from './playback-params.js';
import { MIN_HLS_VERSION } from './playback-params.js';

export const DEFAULT_TARGET_DURATION_S = 6;
/** Segments in a live event's sliding window. */
export const LIVE_WINDOW_SEGMENTS = 5;

/** One ad the ad decision returned, played as a preroll before the content. */
export interface AdSegment {
  id: string;
  durationS: number;
}

/** What a media playlist holds. Durations in seconds. */
export interface PlaylistPlan {
  version: number;
  targetDurationS: number;
  mediaSequence: number;
  /** The content's segment durations, from `mediaSequence` on. */
  segments: number[];
  live: boolean;
  /** Live: Unix ms of the first segment (EXT-X-PROGRAM-DATE-TIME). */
  programDateTime?: number;
}

/**
 * The synthetic length of an asset: 30 s to 15 min, fixed per asset id (FNV-1a), so the same
 * URL always describes the same content and slice/stop checks are repeatable.
 */
export function assetDurationS(assetId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < assetId.length; i++) {
    hash ^= assetId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return 30 + (hash % 871);
}

const bad = (code: number, message: string) => failure(code, 400, message);

/** Plans an asset's playlist: slice, stop offset, duration cap, start segment, minimum final segment. */
export function planAsset(contentS: number, o: PlaybackOptions): PlaylistPlan | PlaybackFailure {
  const target = o.targetDurationS ?? DEFAULT_TARGET_DURATION_S;
  if (o.minSegmentS !== undefined && o.minSegmentS > target) return bad(117, `minDur must not exceed targetDur (${target})`);
  const start = o.sliceStartS ?? 0;
  if (start >= contentS) return bad(124, `sliceStart must be before the end of the content (${contentS} s)`);
  let stop = o.sliceStopS ?? contentS;
  if (stop > contentS || stop <= start) return bad(125, `sliceStop must be after sliceStart and at most ${contentS} s`);
  if (o.stopOffsetS !== undefined) {
    stop = Math.min(stop, contentS - o.stopOffsetS);
    if (stop <= start) return bad(123, 'stopOffset leaves nothing to play');
  }
  if (o.durationS !== undefined) stop = Math.min(stop, start + o.durationS);
  const all: number[] = [];
  for (let at = start; at < stop; at += target) all.push(Math.min(target, stop - at));
  const last = all[all.length - 1];
  if (all.length > 1 && last !== undefined && o.minSegmentS !== undefined && last < o.minSegmentS) all.pop();
  const first = o.startSegment ?? 0;
  if (first >= all.length) return bad(126, `startseg must be below the segment count (${all.length})`);
  return {
    version: o.hlsVersion ?? MIN_HLS_VERSION,
    targetDurationS: target,
    mediaSequence: first,
    segments: all.slice(first),
    live: false,
  };
}

/** Plans a live event's sliding window at `nowMs`: `ts` starts the timeline, `delay` holds back the edge. */
export function planEvent(nowMs: number, o: PlaybackOptions): PlaylistPlan | PlaybackFailure {
  const target = o.targetDurationS ?? DEFAULT_TARGET_DURATION_S;
  if (o.minSegmentS !== undefined && o.minSegmentS > target) return bad(117, `minDur must not exceed targetDur (${target})`);
  const nowS = Math.floor(nowMs / 1000);
  const origin = o.startTs ?? 0;
  if (origin > nowS) return bad(115, 'ts must not be in the future');
  const edge = Math.max(origin, nowS - (o.delayS ?? 0));
  const newest = Math.max(0, Math.floor((edge - origin) / target) - 1);
  const oldest = Math.max(0, newest - LIVE_WINDOW_SEGMENTS + 1);
  const segments = Array.from({ length: newest - oldest + 1 }, () => target);
  return {
    version: o.hlsVersion ?? MIN_HLS_VERSION,
    targetDurationS: target,
    mediaSequence: oldest,
    segments,
    live: true,
    programDateTime: (origin + oldest * target) * 1000,
  };
}

const extinf = (seconds: number) => `#EXTINF:${seconds.toFixed(3)},`;

/** Renders an HLS media playlist; ads come first as a preroll, then a discontinuity. */
export function renderPlaylist(plan: PlaylistPlan, segmentBase: string, ads: readonly AdSegment[] = []): string {
  const longestAd = ads.reduce((m, a) => Math.max(m, Math.ceil(a.durationS)), 0);
  const lines = [
    '#EXTM3U',
    `#EXT-X-VERSION:${plan.version}`,
    `#EXT-X-TARGETDURATION:${Math.max(plan.targetDurationS, longestAd)}`,
    `#EXT-X-MEDIA-SEQUENCE:${plan.mediaSequence}`,
  ];
  if (!plan.live) lines.push('#EXT-X-PLAYLIST-TYPE:VOD');
  for (const ad of ads) lines.push(extinf(ad.durationS), `/ads/${ad.id}.ts`);
  if (ads.length > 0) lines.push('#EXT-X-DISCONTINUITY');
  if (plan.programDateTime !== undefined) lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(plan.programDateTime).toISOString()}`);
  plan.segments.forEach((d, i) => lines.push(extinf(d), `${segmentBase}/${plan.mediaSequence + i}.ts`));
  if (!plan.live) lines.push('#EXT-X-ENDLIST');
  return `${lines.join('\n')}\n`;
}
