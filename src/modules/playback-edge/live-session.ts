import { renderLiveMediaPlaylist, renderLiveMultivariant } from '../../platform/media/live-playlist.js';
import type { LiveRendition, LiveWindowState } from '../../platform/media/live-window.js';

/**
 * A live session's playlists, under `/play/s/<token>/` like a VOD session's: the slicer's
 * multivariant playlist with each variant at `v/<name>.m3u8`, and each variant's media
 * playlist with its init and media segments at `../c/<file>`. Rendered on every request from the
 * window's state (the live window contract; nothing cached, no playlist text read).
 */

/** The files a live window holds that a session may fetch: fMP4 init segments and media segments. */
export const LIVE_FILE = /^[A-Za-z0-9_-]{1,64}\.(mp4|m4s)$/;

/** `init` (EXT-X-MAP) or `segment`, for a file name a live session may fetch; undefined for any other. */
export const liveFileKind = (file: string): 'init' | 'segment' | undefined => {
  const match = LIVE_FILE.exec(file);
  if (!match) return undefined;
  return match[1] === 'mp4' ? 'init' : 'segment';
};

/** The window's multivariant playlist with every variant under the session (relative to `/play/event/<id>.m3u8`, hence `../s/`). */
export const liveMultivariantOf = (token: string, state: LiveWindowState): string =>
  renderLiveMultivariant(state, (r) => `../s/${token}/v/${r.playlist}`);

/** A rendition's media playlist with its init and media segments at `../c/`; `ended`: the event's last playlist (EXT-X-ENDLIST). */
export const liveVariantOf = (rendition: LiveRendition, ended: boolean): string =>
  `${renderLiveMediaPlaylist(rendition, { uriOf: (file) => `../c/${file}`, ended })}\n`;
