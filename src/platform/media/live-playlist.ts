import type { LivePart, LiveRendition, LiveWindowState } from './live-window.js';

/**
 * The one renderer of live playlists: LL-HLS (RFC 8216bis) text from the typed window state
 * (live-window.ts). The window's writer renders the files beside `live.json` with it (what ffmpeg
 * and the pull URL read), the edge renders its sessions' playlists with it (URIs moved under the
 * session); no one reads state back out of the text. The layout is hls-parser's, so the window's
 * tests can read it with hls-parser and compare.
 */

/** Where a file of the window is fetched from, relative to the playlist (identity beside it). */
type UriOf = (file: string) => string;

const same: UriOf = (file) => file;

const fixed = (n: number) => Math.round(n * 100000) / 100000;

const partLine = (p: LivePart, uriOf: UriOf) => `#EXT-X-PART:DURATION=${fixed(p.duration_s)},URI="${uriOf(p.uri)}"${p.independent ? ',INDEPENDENT=YES' : ''}`;

interface MediaPlaylistOptions {
  uriOf?: UriOf;
  /** The event ended: EXT-X-ENDLIST, and no part nor hint (players stop reloading). */
  ended?: boolean;
}

/** A rendition's media playlist as it stands. */
export function renderLiveMediaPlaylist(r: LiveRendition, options: MediaPlaylistOptions = {}): string {
  const uriOf = options.uriOf ?? same;
  const ended = options.ended === true;
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:9',
    '#EXT-X-INDEPENDENT-SEGMENTS',
    `#EXT-X-TARGETDURATION:${r.target_duration_s}`,
    // CAN-SKIP-UNTIL (delta updates) is left out; HOLD-BACK is the RFC's default of three target durations.
    `#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,HOLD-BACK=${3 * r.target_duration_s},PART-HOLD-BACK=${fixed(3 * r.part_target_s)}`,
    `#EXT-X-PART-INF:PART-TARGET=${r.part_target_s}`,
  ];
  if (r.media_sequence) lines.push(`#EXT-X-MEDIA-SEQUENCE:${r.media_sequence}`);
  if (r.discontinuity_sequence) lines.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${r.discontinuity_sequence}`);
  let lastMap: string | undefined;
  const head = (s: { discontinuity: boolean; init: string; program_date_time_ms: number }) => {
    if (s.discontinuity) lines.push('#EXT-X-DISCONTINUITY');
    if (s.init !== lastMap) lines.push(`#EXT-X-MAP:URI="${uriOf(s.init)}"`);
    lastMap = s.init;
    lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(s.program_date_time_ms).toISOString()}`);
  };
  for (const s of r.segments) {
    head(s);
    if (!ended) for (const p of s.parts) lines.push(partLine(p, uriOf));
    lines.push(`#EXTINF:${fixed(s.duration_s)},`, uriOf(s.uri));
  }
  if (r.open && !ended) {
    head(r.open);
    for (const p of r.open.parts) lines.push(partLine(p, uriOf));
  }
  if (r.preload_hint !== undefined && !ended) lines.push(`#EXT-X-PRELOAD-HINT:TYPE=PART,URI="${uriOf(r.preload_hint)}"`);
  if (ended) lines.push('#EXT-X-ENDLIST');
  return lines.join('\n');
}

/** The window's multivariant playlist: each rendition a variant described from what it holds; `uriOf` places its media playlist. */
export function renderLiveMultivariant(state: LiveWindowState, uriOf: (r: LiveRendition) => string = (r) => r.playlist): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:9', '#EXT-X-INDEPENDENT-SEGMENTS'];
  for (const r of state.renditions) {
    // A variant needs a BANDWIDTH: one not measured yet (no complete segment, no profile rate) is not offered.
    if (r.bandwidth === undefined) continue;
    const attributes = [`BANDWIDTH=${r.bandwidth}`];
    if (r.average_bandwidth !== undefined) attributes.push(`AVERAGE-BANDWIDTH=${r.average_bandwidth}`);
    if (r.codecs !== undefined) attributes.push(`CODECS="${r.codecs}"`);
    if (r.resolution) attributes.push(`RESOLUTION=${r.resolution.width}x${r.resolution.height}`);
    if (r.frame_rate !== undefined) attributes.push(`FRAME-RATE=${r.frame_rate.toFixed(3)}`);
    lines.push(`#EXT-X-STREAM-INF:${attributes.join(',')}`, uriOf(r));
  }
  return `${lines.join('\n')}\n`;
}
