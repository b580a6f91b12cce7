import { targetDurationOf } from './segment-plan.js';

/**
 * EXT-X-VERSION of the edge's playlists. fMP4 segments need EXT-X-MAP, which media playlists
 * without I-frames may only use from version 6 (RFC 8216 §4.3.2.5); a lower `hlsver` is raised.
 */
export const DEFAULT_HLS_VERSION = 7;
export const MIN_FMP4_HLS_VERSION = 6;

export const hlsVersionOf = (requested: number | undefined): number => Math.max(requested ?? DEFAULT_HLS_VERSION, MIN_FMP4_HLS_VERSION);

/** One variant of the multivariant playlist. */
export interface VariantEntry {
  uri: string;
  bandwidth: number;
  averageBandwidth: number;
  codecs: string;
  width: number;
  height: number;
}

/** A run of segments sharing one init segment: each ad, then the content. */
export interface VariantPart {
  /** The init segment (EXT-X-MAP URI). */
  map: string;
  segments: ReadonlyArray<{ uri: string; durationS: number }>;
}

export interface VariantPlaylist {
  version: number;
  /** `targetDur`: only ever raises the target the segments need. */
  targetDurationS?: number | undefined;
  mediaSequence: number;
  parts: readonly VariantPart[];
  /**
   * False while the content is still being packaged: an EVENT playlist (segments are only ever
   * appended) without EXT-X-ENDLIST, that players start from its beginning (EXT-X-START), not
   * at its live edge. Default true: a VOD playlist.
   */
  complete?: boolean;
}

const quoted = (uri: string) => `"${uri.replaceAll('"', '%22')}"`;

/** The multivariant playlist: one EXT-X-STREAM-INF per rendition. */
export function renderMultivariant(version: number, variants: readonly VariantEntry[]): string {
  const lines = ['#EXTM3U', `#EXT-X-VERSION:${version}`, '#EXT-X-INDEPENDENT-SEGMENTS'];
  for (const v of variants) {
    lines.push(
      `#EXT-X-STREAM-INF:BANDWIDTH=${v.bandwidth},AVERAGE-BANDWIDTH=${v.averageBandwidth},CODECS="${v.codecs}",RESOLUTION=${v.width}x${v.height}`,
      v.uri,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A VOD media playlist (or, for content still being packaged, an EVENT one): the parts in order
 * (prerolls first), each with its own EXT-X-MAP and an EXT-X-DISCONTINUITY between them
 * (timestamps and encoding change from one to the next).
 */
export function renderVariant(p: VariantPlaylist): string {
  const durations = p.parts.flatMap((part) => part.segments.map((s) => s.durationS));
  const complete = p.complete ?? true;
  const lines = [
    '#EXTM3U',
    `#EXT-X-VERSION:${p.version}`,
    `#EXT-X-TARGETDURATION:${Math.max(targetDurationOf(durations), p.targetDurationS ?? 0)}`,
    `#EXT-X-MEDIA-SEQUENCE:${p.mediaSequence}`,
    `#EXT-X-PLAYLIST-TYPE:${complete ? 'VOD' : 'EVENT'}`,
    '#EXT-X-INDEPENDENT-SEGMENTS',
  ];
  if (!complete) lines.push('#EXT-X-START:TIME-OFFSET=0');
  p.parts.forEach((part, i) => {
    if (i > 0) lines.push('#EXT-X-DISCONTINUITY');
    lines.push(`#EXT-X-MAP:URI=${quoted(part.map)}`);
    for (const s of part.segments) lines.push(`#EXTINF:${s.durationS.toFixed(3)},`, s.uri);
  });
  if (complete) lines.push('#EXT-X-ENDLIST');
  return `${lines.join('\n')}\n`;
}
