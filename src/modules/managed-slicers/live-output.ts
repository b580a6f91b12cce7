import { join } from 'node:path';

/**
 * Where a managed slicer writes its rolling live HLS window (fMP4), the contract between the
 * slicer that writes it, the playback edge that serves it and the publisher that pushes it:
 * `<media root>/live/<owner>/<slicer id>/`, whose `index.m3u8` is the multivariant playlist
 * (a media playlist when the profile has a single rendition).
 */
export const liveOutputDir = (mediaRoot: string, owner: string, slicerId: string): string =>
  join(mediaRoot, 'live', owner, slicerId);

/** The live window's entry playlist (see `liveOutputDir`). */
export const livePlaylistPath = (mediaRoot: string, owner: string, slicerId: string): string =>
  join(liveOutputDir(mediaRoot, owner, slicerId), 'index.m3u8');
