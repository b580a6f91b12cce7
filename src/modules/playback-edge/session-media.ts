import { hlsVersionOf, renderMultivariant, renderVariant, type VariantEntry, type VariantPart } from './hls-playlist.js';
import type { PackagedAsset } from './media-library.js';
import { periodsOf, type PackagedRendition } from '../../platform/media/packaged-manifest.js';
import { failure, PlaybackFailure } from './playback-failure.js';
import { planSegments, type SegmentRange } from './segment-plan.js';
import type { SessionGrant, SessionPlan } from './session-token.js';

/**
 * A session's files, under `/play/s/<token>/`:
 * `v/<rendition>.m3u8` (variant playlists), `c/<path>` (the content's init and media segments,
 * paths as in its manifest), `a/<n>/<path>` (the n-th preroll ad's). Variant playlists name
 * their segments relative to themselves (`../c/...`), so a token appears once per request.
 */
export const variantUri = (token: string, rendition: string) => `s/${token}/v/${rendition}.m3u8`;
const contentUri = (path: string) => `../c/${path}`;
const adUri = (n: number, path: string) => `../a/${n}/${path}`;

/** The ad rendition that fits a content rendition best: nearest in height, then in bandwidth. */
export function closestRendition(ad: PackagedAsset, to: PackagedRendition): PackagedRendition {
  let best = ad.manifest.renditions[0] as PackagedRendition;
  const distance = (r: PackagedRendition) => [Math.abs(r.height - to.height), Math.abs(r.bandwidth - to.bandwidth)] as const;
  for (const r of ad.manifest.renditions) {
    const [dh, db] = distance(r);
    const [bh, bb] = distance(best);
    if (dh < bh || (dh === bh && db < bb)) best = r;
  }
  return best;
}

/** The multivariant playlist of a session: one variant per content rendition, its peak covering its ads'. */
export function multivariantOf(token: string, grant: SessionGrant, content: PackagedAsset, ads: readonly PackagedAsset[]): string {
  const variants: VariantEntry[] = content.manifest.renditions.map((r) => {
    const adRenditions = ads.map((ad) => closestRendition(ad, r));
    return {
      uri: variantUri(token, r.name),
      bandwidth: Math.max(r.bandwidth, ...adRenditions.map((a) => a.bandwidth)),
      averageBandwidth: r.average_bandwidth,
      codecs: r.codecs,
      width: r.width,
      height: r.height,
    };
  });
  return renderMultivariant(hlsVersionOf(grant.plan.hlsVersion), variants);
}

/**
 * The segments of a rendition a session plays. A complete asset is planned over its segments. An
 * asset still being packaged is planned over what it will be (the segments packaged so far, then
 * segments of the target length up to its expected duration), so a URL's slice means the same
 * before and after it is ready, and listed as far as it is packaged (`end` may then be at or
 * before `first`: nothing of the slice is packaged yet).
 */
export function plannedRange(content: PackagedAsset, rendition: PackagedRendition, plan: SessionPlan): SegmentRange | PlaybackFailure {
  const durations = rendition.segments.map((s) => s.duration_s);
  if (content.complete) return planSegments(durations, content.manifest.duration_s, plan);
  const packaged = durations.length;
  const segmentS = content.manifest.segment_s;
  const expected = content.expectedDurationS;
  let at = durations.reduce((sum, d) => sum + d, 0);
  while (expected - at > 0.001) {
    const d = Math.min(segmentS, expected - at);
    durations.push(d);
    at += d;
  }
  const range = planSegments(durations, expected, plan);
  if (range instanceof PlaybackFailure) return range;
  return { ...range, end: Math.min(range.end, packaged) };
}

/** One rendition's variant playlist: every ad whole (its closest rendition), then the planned content segments (growing, as an EVENT playlist, while packaged). */
export function variantOf(grant: SessionGrant, content: PackagedAsset, rendition: PackagedRendition, ads: readonly PackagedAsset[]): string | PlaybackFailure {
  const range = plannedRange(content, rendition, grant.plan);
  if (range instanceof PlaybackFailure) return range;
  const parts: VariantPart[] = ads.map((ad, n) => {
    const r = closestRendition(ad, rendition);
    return { map: adUri(n, r.init), segments: r.segments.map((s) => ({ uri: adUri(n, s.uri), durationS: s.duration_s })) };
  });
  // The content's periods (a recorded live event: one per encoder connection) within the planned range.
  const end = Math.max(range.first, range.end);
  const periods = periodsOf(rendition);
  const periodParts: VariantPart[] = [];
  periods.forEach((period, i) => {
    const from = Math.max(period.from, range.first);
    const to = Math.min(periods[i + 1]?.from ?? rendition.segments.length, end);
    if (to > from) periodParts.push({ map: contentUri(period.init), segments: rendition.segments.slice(from, to).map((s) => ({ uri: contentUri(s.uri), durationS: s.duration_s })) });
  });
  // Nothing of the range packaged yet: the period it starts in, with no segment.
  if (periodParts.length === 0) periodParts.push({ map: contentUri((periods.findLast((p) => p.from <= range.first) ?? periods[0])?.init ?? rendition.init), segments: [] });
  parts.push(...periodParts);
  // The target of a growing playlist stays what its segments will need (it may not change between reloads).
  const target = content.complete ? grant.plan.targetDurationS : Math.max(grant.plan.targetDurationS ?? 0, Math.ceil(content.manifest.segment_s));
  return renderVariant({ version: hlsVersionOf(grant.plan.hlsVersion), targetDurationS: target, mediaSequence: range.mediaSequence, parts, complete: content.complete });
}

/** What a path under the session token names. */
export type SessionPath =
  | { kind: 'variant'; rendition: string }
  | { kind: 'content'; file: string }
  | { kind: 'ad'; index: number; file: string };

const VARIANT = /^v\/([A-Za-z0-9_-]{1,32})\.m3u8$/;
const AD = /^a\/(\d{1,2})\/(.+)$/;

export function parseSessionPath(path: string): SessionPath | PlaybackFailure {
  const variant = VARIANT.exec(path);
  if (variant) return { kind: 'variant', rendition: variant[1] as string };
  if (path.startsWith('c/') && path.length > 2) return { kind: 'content', file: path.slice(2) };
  const ad = AD.exec(path);
  if (ad) return { kind: 'ad', index: Number(ad[1]), file: ad[2] as string };
  return failure(999, 404, 'no such file in a playback session');
}

/** `init` (EXT-X-MAP) or `segment` (media), for a file the asset's manifest names; undefined for any other path. */
export function fileKindOf(asset: PackagedAsset, file: string): 'init' | 'segment' | undefined {
  if (!asset.files.has(file)) return undefined;
  return asset.inits.has(file) ? 'init' : 'segment';
}
