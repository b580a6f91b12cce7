import { join } from 'node:path';

/**
 * Where everything lives under the media root (`mediaRootOf`), stated once for every writer and
 * reader (asset library, playback edge, managed slicers, publishing, the simulator):
 * - `uploads/<uuid>.part`: uploads being received;
 * - `sources/<owner>/<asset id>`: an upload waiting for (or being) packaged;
 * - `work/<owner>/<asset id>/attempt-<n>/`: one packaging attempt's output;
 * - `assets/<owner>/<asset id>/`: a packaged asset, `manifest.json` and the files it names;
 * - `live/<owner>/<slicer id>/`: a managed slicer's rolling live window, entered by `index.m3u8`;
 * - `live-input/<owner>/<slicer id>/`: what an encoder pushes to an `hls` slicer;
 * - `simulate/`: the clip `playline simulate` links its assets from.
 * Path builders refuse an unsafe id (it could climb out of the root); readers answering "not
 * found" check `isSafePathId` first.
 */

/** Ids that may name a directory: workspace, asset and slicer ids (32 hex digits), rendition names. */
const SAFE_PATH_ID = /^[A-Za-z0-9_-]{1,64}$/;

export const isSafePathId = (id: string): boolean => SAFE_PATH_ID.test(id);

const checked = (id: string): string => {
  if (!isSafePathId(id)) throw new Error(`unsafe id for a media path: ${JSON.stringify(id)}`);
  return id;
};

/** The asset library's directories, created at its start. */
export const assetLibraryDirs = (root: string) => ({
  uploads: join(root, 'uploads'),
  sources: join(root, 'sources'),
  work: join(root, 'work'),
  assets: join(root, 'assets'),
});

export const sourcePath = (root: string, owner: string, assetId: string): string => join(assetLibraryDirs(root).sources, checked(owner), checked(assetId));

/** Every packaging attempt of one asset, `attempt-<n>/` each. */
export const assetWorkDir = (root: string, owner: string, assetId: string): string => join(assetLibraryDirs(root).work, checked(owner), checked(assetId));

export const attemptDir = (root: string, owner: string, assetId: string, attempt: number): string => join(assetWorkDir(root, owner, assetId), `attempt-${attempt}`);

/** A packaged asset's directory (whether or not it exists). */
export const assetDir = (root: string, owner: string, assetId: string): string => join(assetLibraryDirs(root).assets, checked(owner), checked(assetId));

/** The live windows of every workspace (`<owner>/<slicer id>/` below). */
export const liveRoot = (root: string): string => join(root, 'live');

const liveInputRoot = (root: string): string => join(root, 'live-input');

const recordingsRoot = (root: string): string => join(root, 'recordings');

/** Every live window and pushed input of one workspace (three levels of folders below each). */
export const liveDirsOfOwner = (root: string, owner: string): string[] => [join(liveRoot(root), checked(owner)), join(liveInputRoot(root), checked(owner))];

/** The live events of one workspace being recorded (`<slicer id>/<recording id>/<rendition>/` below). */
export const recordingsOfOwner = (root: string, owner: string): string => join(recordingsRoot(root), checked(owner));

/** A slicer's recordings under way (or left unfinished by a killed server). */
export const recordingsOfSlicer = (root: string, owner: string, slicerId: string): string => join(recordingsOfOwner(root, owner), checked(slicerId));

/** One live event being recorded: its renditions' segments (hard links of the live window's files) and its journal. */
export const recordingDir = (root: string, owner: string, slicerId: string, recordingId: string): string => join(recordingsOfSlicer(root, owner, slicerId), checked(recordingId));

/** A managed slicer's rolling live HLS window (fMP4), written by its ffmpeg, served by the edge, pushed by publishing. */
export const liveDir = (root: string, owner: string, slicerId: string): string => join(liveRoot(root), checked(owner), checked(slicerId));

/** The live window's entry: the multivariant playlist (a media playlist when the profile has one rendition). */
export const LIVE_INDEX_FILE = 'index.m3u8';

/** The media playlist of a live profile with one rendition (`passthrough`; `audio-only`'s own name), beside index.m3u8. */
export const LIVE_SINGLE_PLAYLISTS = ['media_main.m3u8', 'media_audio.m3u8'] as const;

export const livePlaylistPath = (root: string, owner: string, slicerId: string): string => join(liveDir(root, owner, slicerId), LIVE_INDEX_FILE);

/** Where `hls` push ingest lands: the encoder's playlist (`index.m3u8`) and segments, read by the slicer's ffmpeg. */
export const liveInputDir = (root: string, owner: string, slicerId: string): string => join(liveInputRoot(root), checked(owner), checked(slicerId));

/** Where `playline simulate` generates its clip once per media root; `version` changes with the clip's recipe. */
export const simulatorClipDir = (root: string, version: string): string => join(root, 'simulate', checked(version));
