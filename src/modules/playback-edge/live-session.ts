/**
 * A live session's playlists, under `/play/s/<token>/` like a VOD session's: the slicer's
 * multivariant playlist with each variant at `v/<name>.m3u8`, and each variant's media
 * playlist with its init and media segments at `../c/<file>`. Rewritten on every request from
 * what the slicer wrote last (nothing cached).
 */

const VARIANT_NAME = /^([A-Za-z0-9_-]{1,32})\.m3u8$/;
/** The files a live window holds that a session may fetch: fMP4 init segments and media segments. */
export const LIVE_FILE = /^[A-Za-z0-9_-]{1,64}\.(mp4|m4s)$/;

/** An LL-HLS part of a live window: `seg_<rendition>_<msn>_p<n>.m4s` (ll-hls-window.ts). */
export const LIVE_PART_FILE = /^seg_([A-Za-z0-9-]{1,32})_(\d{1,20})_p(\d{1,4})\.m4s$/;

/** A tag's URI attribute moved to `../c/` when it names a file of the window; undefined (the tag is left out) when not. */
const withContentUri = (line: string): string | undefined => {
  const uri = /URI="([^"]*)"/.exec(line)?.[1];
  if (uri === undefined || liveFileKind(uri) !== 'segment') return undefined;
  return line.replace(`URI="${uri}"`, `URI="../c/${uri}"`);
};

/** `init` (EXT-X-MAP) or `segment`, for a file name a live session may fetch; undefined for any other. */
export const liveFileKind = (file: string): 'init' | 'segment' | undefined => {
  const match = LIVE_FILE.exec(file);
  if (!match) return undefined;
  return match[1] === 'mp4' ? 'init' : 'segment';
};

/**
 * The slicer's `index.m3u8` with every variant URI moved under the session (relative to
 * `/play/event/<id>.m3u8`, hence `../s/`); variants with unexpected names are left out.
 */
export function liveMultivariantOf(token: string, index: string): string {
  const out: string[] = [];
  let pendingInf: string | undefined;
  for (const raw of index.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#EXT-X-STREAM-INF')) {
      pendingInf = line;
      continue;
    }
    if (line.startsWith('#')) {
      out.push(line);
      continue;
    }
    const name = VARIANT_NAME.exec(line)?.[1];
    if (pendingInf !== undefined && name !== undefined) out.push(pendingInf, `../s/${token}/v/${name}.m3u8`);
    pendingInf = undefined;
  }
  return `${out.join('\n')}\n`;
}

/** A media playlist of the window with its init and media segments moved to `../c/`; other URIs are left out. */
export function liveVariantOf(playlist: string): string {
  const out: string[] = [];
  let pendingInf: string | undefined;
  for (const raw of playlist.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#EXT-X-MAP:')) {
      const uri = /URI="([^"]*)"/.exec(line)?.[1];
      if (uri !== undefined && liveFileKind(uri) === 'init') out.push(line.replace(`URI="${uri}"`, `URI="../c/${uri}"`));
      continue;
    }
    if (line.startsWith('#EXTINF')) {
      pendingInf = line;
      continue;
    }
    if (line.startsWith('#EXT-X-PART:') || line.startsWith('#EXT-X-PRELOAD-HINT:')) {
      const moved = withContentUri(line);
      if (moved !== undefined) out.push(moved);
      continue;
    }
    if (line.startsWith('#EXT-X-RENDITION-REPORT:')) continue;
    if (line.startsWith('#')) {
      out.push(line);
      continue;
    }
    if (pendingInf !== undefined && liveFileKind(line) === 'segment') out.push(pendingInf, `../c/${line}`);
    pendingInf = undefined;
  }
  return `${out.join('\n')}\n`;
}
