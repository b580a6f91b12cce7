import { parse, setOptions, types } from 'hls-parser';

/**
 * Strict reading of HLS playlists plus the RFC 8216 rules a parser does not check, as the
 * real-player tests apply them: each rule broken is one line naming the playlist, so a failing
 * test lists them all.
 */

// Throw on anything the parser finds malformed, instead of logging it and going on.
setOptions({ strictMode: true, silent: true });

export const parseMultivariant = (text: string): types.MasterPlaylist => {
  const playlist = parse(text);
  if (!(playlist instanceof types.MasterPlaylist)) throw new Error(`not a multivariant playlist:\n${text}`);
  return playlist;
};

export const parseMedia = (text: string): types.MediaPlaylist => {
  const playlist = parse(text);
  if (!(playlist instanceof types.MediaPlaylist)) throw new Error(`not a media playlist:\n${text}`);
  return playlist;
};

/** Every variant of a multivariant playlist with video names its CODECS, BANDWIDTH and RESOLUTION (§4.3.4.2). */
export function multivariantProblems(name: string, playlist: types.MasterPlaylist): string[] {
  const problems: string[] = [];
  if (playlist.variants.length === 0) problems.push(`${name}: no variant`);
  for (const v of playlist.variants) {
    const codecs = v.codecs ?? '';
    if (!(v.bandwidth > 0)) problems.push(`${name}: ${v.uri} has no BANDWIDTH`);
    if (codecs === '') problems.push(`${name}: ${v.uri} has no CODECS`);
    const video = /(^|,)\s*(avc[13]|hvc1|hev1|av01|vp09)\./.test(codecs);
    if (video && !(v.resolution && v.resolution.width > 0 && v.resolution.height > 0)) problems.push(`${name}: video variant ${v.uri} has no RESOLUTION`);
  }
  return problems;
}

/** Whether any of the playlist's lines is `tag` (with or without attributes). */
const hasTag = (text: string, tag: string) => text.split('\n').some((line) => line === tag || line.startsWith(`${tag}:`));

/**
 * A media playlist's own rules: EXT-X-VERSION at least what its features need (§7: EXT-X-MAP
 * without I-frames 6, BYTERANGE 4, floating-point EXTINF 3), EXT-X-TARGETDURATION at least every
 * EXTINF rounded to the nearest integer (§4.3.3.1), every segment of an fMP4 playlist under an
 * EXT-X-MAP (§4.3.2.5), and a new EXT-X-MAP after each discontinuity when the encoding changes.
 */
export function mediaProblems(name: string, text: string, whole: types.MediaPlaylist): string[] {
  const problems: string[] = [];
  const needs: Array<[number, string]> = [];
  // LL-HLS (RFC 8216bis): the EXT-X-PART tags after the last EXTINF belong to the segment being
  // written, which hls-parser reads as a last segment without URI or EXTINF: its parts are checked.
  const open = whole.segments.at(-1);
  const partial = open !== undefined && !open.uri && open.parts.length > 0 ? open : undefined;
  if (partial) for (const p of partial.parts) if (!p.hint && !(Number(p.duration) > 0)) problems.push(`${name}: EXT-X-PART ${p.uri} without a duration`);
  const playlist = partial ? { ...whole, segments: whole.segments.slice(0, -1) } : whole;
  const fmp4 = playlist.segments.some((s) => s.map !== undefined || /\.(m4s|mp4)(\?|$)/.test(s.uri));
  if (fmp4 && !playlist.isIFrame) needs.push([6, 'EXT-X-MAP']);
  if (hasTag(text, '#EXT-X-BYTERANGE')) needs.push([4, 'EXT-X-BYTERANGE']);
  if (playlist.segments.some((s) => !Number.isInteger(s.duration))) needs.push([3, 'floating-point EXTINF']);
  if (hasTag(text, '#EXT-X-SKIP')) needs.push([9, 'EXT-X-SKIP']);
  for (const [version, feature] of needs) {
    if ((playlist.version ?? 1) < version) problems.push(`${name}: EXT-X-VERSION ${playlist.version ?? 1} but ${feature} needs ${version}`);
  }
  if (!hasTag(text, '#EXT-X-TARGETDURATION')) problems.push(`${name}: no EXT-X-TARGETDURATION`);
  for (const s of playlist.segments) {
    if (Math.round(s.duration) > playlist.targetDuration) problems.push(`${name}: EXTINF ${s.duration} of ${s.uri} rounds above EXT-X-TARGETDURATION ${playlist.targetDuration}`);
    if (!(s.duration > 0)) problems.push(`${name}: EXTINF ${s.duration} of ${s.uri}`);
  }
  if (fmp4) {
    for (const s of playlist.segments) if (s.map === undefined) problems.push(`${name}: fMP4 segment ${s.uri} without EXT-X-MAP`);
  }
  if (playlist.segments.length === 0) problems.push(`${name}: no segment`);
  return problems;
}

/**
 * Two loads of one live media playlist, `before` then `after` (§6.2.1, §6.2.2): the media
 * sequence never goes back, and a segment in both keeps its media sequence number (same URI)
 * and its discontinuity sequence number (EXT-X-DISCONTINUITY-SEQUENCE plus the
 * EXT-X-DISCONTINUITY tags up to it, §4.3.3.3: the base grows by the tags that left the window).
 */
export function reloadProblems(name: string, before: types.MediaPlaylist, after: types.MediaPlaylist): string[] {
  const problems: string[] = [];
  const seqBefore = before.mediaSequenceBase ?? 0;
  const seqAfter = after.mediaSequenceBase ?? 0;
  if (seqAfter < seqBefore) problems.push(`${name}: EXT-X-MEDIA-SEQUENCE went back from ${seqBefore} to ${seqAfter}`);
  // A segment still being written (LL-HLS: parts, no URI yet) is no segment of the window yet.
  const byUri = new Map(before.segments.filter((s) => Boolean(s.uri)).map((s) => [s.uri, s] as const));
  for (const s of after.segments) {
    if (!s.uri) continue;
    const earlier = byUri.get(s.uri);
    if (!earlier) continue;
    if (earlier.mediaSequenceNumber !== s.mediaSequenceNumber) problems.push(`${name}: ${s.uri} was media sequence ${earlier.mediaSequenceNumber}, now ${s.mediaSequenceNumber}`);
    if (earlier.discontinuitySequence !== s.discontinuitySequence) problems.push(`${name}: ${s.uri} was discontinuity sequence ${earlier.discontinuitySequence}, now ${s.discontinuitySequence}`);
  }
  return problems;
}
