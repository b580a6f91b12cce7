/**
 * A pushed playlist is never handed to ffmpeg as sent: it is parsed and written anew from what
 * was understood, so the slicer's ffmpeg reads only text this module produced. That closes the
 * gap between "what a check reads" and "what ffmpeg's HLS reader reads" as a class:
 * - only printable ASCII and LF (CRLF is taken as LF): a lone CR, a NUL or any other control
 *   character ends lines for ffmpeg but not for a check, so it is refused, never reinterpreted;
 * - only known tags, each re-emitted from its parsed value (an attribute's URI quoted or not is
 *   read the same way, and written back quoted); unknown tags, titles and comments are dropped;
 * - every URI is a bare file name of the slicer's own folder, of the kind its place expects: a
 *   variant or rendition (EXT-X-STREAM-INF, EXT-X-MEDIA) is a `.m3u8` (itself re-serialised on
 *   push), a segment or EXT-X-MAP never is (and a pushed segment must hold media, see
 *   `segmentHeadProblem`), so no file ffmpeg opens can be a playlist nobody checked.
 */

/** A file name of the slicer's folder: no path, no dotfile. */
const BARE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}$/;
const PLAYLIST_NAME = /\.m3u8$/;
const SEGMENT_NAME = /\.(ts|m4s|mp4|aac)$/;

export type PushedPlaylist = { ok: true; text: string } | { ok: false; problems: string[] };

const INT = /^\d{1,15}$/;
const DECIMAL = /^\d{1,9}(\.\d{1,9})?$/;
const BYTERANGE = /^\d{1,15}(@\d{1,15})?$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}(:?\d{2})?)?$/;
const TOKEN = /^[A-Za-z0-9_ .,+-]{0,200}$/;

/** Attribute values written back, per attribute: quoted or not, and what they may hold. */
const ATTRIBUTES: Record<string, { quoted: boolean; value: RegExp }> = {
  BANDWIDTH: { quoted: false, value: INT },
  'AVERAGE-BANDWIDTH': { quoted: false, value: INT },
  CODECS: { quoted: true, value: TOKEN },
  RESOLUTION: { quoted: false, value: /^\d{1,5}x\d{1,5}$/ },
  'FRAME-RATE': { quoted: false, value: DECIMAL },
  AUDIO: { quoted: true, value: TOKEN },
  VIDEO: { quoted: true, value: TOKEN },
  SUBTITLES: { quoted: true, value: TOKEN },
  TYPE: { quoted: false, value: /^(AUDIO|VIDEO|SUBTITLES)$/ },
  'GROUP-ID': { quoted: true, value: TOKEN },
  NAME: { quoted: true, value: TOKEN },
  LANGUAGE: { quoted: true, value: /^[A-Za-z0-9-]{1,35}$/ },
  DEFAULT: { quoted: false, value: /^(YES|NO)$/ },
  AUTOSELECT: { quoted: false, value: /^(YES|NO)$/ },
  CHANNELS: { quoted: true, value: /^[A-Za-z0-9/-]{1,20}$/ },
  BYTERANGE: { quoted: true, value: BYTERANGE },
  'TIME-OFFSET': { quoted: false, value: /^-?\d{1,9}(\.\d{1,9})?$/ },
};

/** Tags with a single value, written back as `#TAG:<value>` when it matches. */
const VALUE_TAGS: Record<string, RegExp> = {
  '#EXT-X-VERSION': INT,
  '#EXT-X-TARGETDURATION': INT,
  '#EXT-X-MEDIA-SEQUENCE': INT,
  '#EXT-X-DISCONTINUITY-SEQUENCE': INT,
  '#EXT-X-PLAYLIST-TYPE': /^(EVENT|VOD)$/,
  '#EXT-X-ALLOW-CACHE': /^(YES|NO)$/,
  '#EXT-X-PROGRAM-DATE-TIME': DATE_TIME,
  '#EXT-X-BYTERANGE': BYTERANGE,
};
const BARE_TAGS = new Set(['#EXT-X-ENDLIST', '#EXT-X-DISCONTINUITY', '#EXT-X-INDEPENDENT-SEGMENTS']);

/** `A=1,B="x,y",C=z` → entries; undefined when it is not an attribute list. */
function attributeList(text: string): Array<[string, string]> | undefined {
  const entries: Array<[string, string]> = [];
  const pattern = /([A-Z0-9-]+)=("[^"]*"|[^",]*)(,|$)/y;
  let at = 0;
  while (at < text.length) {
    pattern.lastIndex = at;
    const match = pattern.exec(text);
    if (!match) return undefined;
    const raw = match[2] ?? '';
    entries.push([match[1] ?? '', raw.startsWith('"') ? raw.slice(1, -1) : raw]);
    at = pattern.lastIndex;
  }
  return entries;
}

interface Context {
  problems: string[];
  /** Whether the playlist names variants (a multivariant playlist) or segments. */
  variants: number;
  segments: number;
}

function checkUri(uri: string, kind: 'playlist' | 'segment', line: number, cx: Context): boolean {
  const ok = BARE_NAME.test(uri) && (kind === 'playlist' ? PLAYLIST_NAME : SEGMENT_NAME).test(uri);
  if (!ok) {
    const expected = kind === 'playlist' ? 'a bare name ending in .m3u8' : 'a bare name ending in .ts, .m4s, .mp4 or .aac';
    cx.problems.push(`line ${line} names something other than a ${kind} file of this folder (${expected})`);
  }
  return ok;
}

/** An attribute tag written back with its known attributes; its URI (if any) checked as `uriKind`. */
function attributeTag(tag: string, value: string, line: number, cx: Context, uriKind: 'playlist' | 'segment' | undefined): string | undefined {
  const entries = attributeList(value);
  if (!entries) {
    cx.problems.push(`line ${line}: ${tag} has no valid attribute list`);
    return undefined;
  }
  const out: string[] = [];
  for (const [name, raw] of entries) {
    if (name === 'URI') {
      if (uriKind === undefined || !checkUri(raw, uriKind, line, cx)) {
        if (uriKind === undefined) cx.problems.push(`line ${line}: ${tag} may not name a URI`);
        return undefined;
      }
      out.push(`URI="${raw}"`);
      continue;
    }
    const rule = ATTRIBUTES[name];
    if (rule === undefined) continue;
    if (!rule.value.test(raw)) {
      cx.problems.push(`line ${line}: ${tag} attribute ${name} has a value this server does not accept`);
      return undefined;
    }
    out.push(rule.quoted ? `${name}="${raw}"` : `${name}=${raw}`);
  }
  return `${tag}:${out.join(',')}`;
}

/** Parses a pushed playlist and writes it anew (module comment), or says every problem (at most 10). */
export function reserializePushedPlaylist(text: string): PushedPlaylist {
  const unified = text.replace(/\r\n/g, '\n');
  const control = /[^\x20-\x7E\n]/.exec(unified);
  if (control) {
    const line = unified.slice(0, control.index).split('\n').length;
    return { ok: false, problems: [`line ${line} holds a control or non-ASCII character (code ${control[0].charCodeAt(0)}): lines end with LF (or CRLF) only`] };
  }
  const lines = unified.split('\n').map((line) => line.trim());
  if (lines[0] !== '#EXTM3U') return { ok: false, problems: ['a playlist starts with #EXTM3U'] };
  const cx: Context = { problems: [], variants: 0, segments: 0 };
  const out = ['#EXTM3U'];
  let expectVariant = false;
  lines.slice(1).forEach((line, i) => {
    const n = i + 2;
    if (line === '') return;
    if (!line.startsWith('#')) {
      if (expectVariant) cx.variants++;
      else cx.segments++;
      if (checkUri(line, expectVariant ? 'playlist' : 'segment', n, cx)) out.push(line);
      expectVariant = false;
      return;
    }
    const colon = line.indexOf(':');
    const tag = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1);
    if (tag === '#EXTINF') {
      const duration = value.split(',')[0] ?? '';
      if (DECIMAL.test(duration)) out.push(`#EXTINF:${duration},`);
      else cx.problems.push(`line ${n}: #EXTINF needs a duration in seconds`);
    } else if (tag === '#EXT-X-STREAM-INF') {
      const written = attributeTag(tag, value, n, cx, undefined);
      if (written) out.push(written);
      expectVariant = true;
    } else if (tag === '#EXT-X-MAP') {
      const written = attributeTag(tag, value, n, cx, 'segment');
      if (written) out.push(written);
    } else if (tag === '#EXT-X-MEDIA') {
      const written = attributeTag(tag, value, n, cx, 'playlist');
      if (written) out.push(written);
    } else if (tag === '#EXT-X-START') {
      const written = attributeTag(tag, value, n, cx, undefined);
      if (written) out.push(written);
    } else if (tag === '#EXT-X-KEY' || tag === '#EXT-X-SESSION-KEY') {
      cx.problems.push(`line ${n}: encrypted input (${tag}) is not taken: push clear segments (the output is served over signed URLs)`);
    } else if (VALUE_TAGS[tag] !== undefined) {
      if (VALUE_TAGS[tag].test(value)) out.push(`${tag}:${value}`);
      else cx.problems.push(`line ${n}: ${tag} has a value this server does not accept`);
    } else if (BARE_TAGS.has(tag)) {
      out.push(tag);
    }
    // Any other tag or comment is dropped: ffmpeg never sees it.
  });
  if (expectVariant) cx.problems.push('the last #EXT-X-STREAM-INF names no variant');
  if (cx.variants > 0 && cx.segments > 0) cx.problems.push('a playlist names either variants (after #EXT-X-STREAM-INF) or segments, not both');
  if (cx.problems.length > 0) return { ok: false, problems: cx.problems.slice(0, 10) };
  return { ok: true, text: `${out.join('\n')}\n` };
}

const ISO_BOXES = new Set(['ftyp', 'styp', 'moof', 'moov', 'sidx', 'free', 'skip', 'emsg', 'prft', 'mdat', 'uuid']);

/** Length of the ID3v2 tag at `at` (0 when there is none). */
const id3Length = (head: Buffer, at: number): number => {
  if (head.length < at + 10 || head.toString('latin1', at, at + 3) !== 'ID3') return 0;
  const size = ((head[at + 6] ?? 0) << 21) | ((head[at + 7] ?? 0) << 14) | ((head[at + 8] ?? 0) << 7) | (head[at + 9] ?? 0);
  return 10 + size + ((head[at + 5] ?? 0) & 0x10 ? 10 : 0);
};

/**
 * Why the first bytes of a pushed segment are not the media its name says (undefined when they
 * are): ffmpeg probes every file it opens, and a "segment" that is a playlist (even behind an
 * ID3 tag, which the probe skips) would be read as one, paths and all. MPEG-TS starts with its
 * sync byte, fMP4/MP4 with an ISO box, AAC with an ADTS header (after ID3 tags). Empty is fine.
 */
export function segmentHeadProblem(file: string, head: Buffer): string | undefined {
  if (head.length === 0) return undefined;
  const kind = SEGMENT_NAME.exec(file)?.[1];
  if (kind === 'ts') return head[0] === 0x47 ? undefined : 'a .ts segment starts with the MPEG-TS sync byte (0x47)';
  if (kind === 'mp4' || kind === 'm4s') return head.length >= 8 && ISO_BOXES.has(head.toString('latin1', 4, 8)) ? undefined : `a .${kind} segment starts with an ISO BMFF box (ftyp, styp, moof...)`;
  if (kind === 'aac') {
    let at = 0;
    for (let skip = id3Length(head, at); skip > 0; skip = id3Length(head, at)) at += skip;
    const ok = head.length >= at + 2 && head[at] === 0xff && ((head[at + 1] ?? 0) & 0xf0) === 0xf0;
    return ok ? undefined : 'an .aac segment holds ADTS frames (after ID3 tags)';
  }
  return 'not a segment name';
}
