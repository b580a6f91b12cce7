import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LiveStreamDescriber } from '../../platform/media/live-stream-inf.js';
import { isSafePathId, liveDir, livePlaylistPath } from '../../platform/media/media-layout.js';

/** A slicer's live window as the edge plays it: where its files are and its multivariant playlist as just read. */
export interface LiveWindow {
  owner: string;
  slicerId: string;
  /** Absolute directory of the window's playlists and segments. */
  dir: string;
  /** `index.m3u8` as read now, each variant's EXT-X-STREAM-INF describing what its window holds (CODECS, BANDWIDTH...). */
  index: string;
}

/** The port to the slicers' live output: read-only files, never cached (a live playlist changes every segment). */
export interface LiveLibrary {
  /** The slicer's live window, or undefined when the workspace has no such slicer output (yet). */
  find(owner: string, slicerId: string): Promise<LiveWindow | undefined>;
  /** A media playlist of the window (`<name>.m3u8`) as it is now, or undefined when it is gone. */
  playlist(owner: string, slicerId: string, name: string): Promise<string | undefined>;
  /** The directory of a slicer's window (whether or not it exists). */
  dirOf(owner: string, slicerId: string): string;
}

const readIfThere = async (file: string): Promise<string | undefined> => {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
};

/** Reads the live windows slicers write (`liveDir` in the media layout). */
export class FileLiveLibrary implements LiveLibrary {
  constructor(
    private readonly root: string,
    private readonly describer = new LiveStreamDescriber(),
  ) {}

  dirOf(owner: string, slicerId: string): string {
    return liveDir(this.root, owner, slicerId);
  }

  async find(owner: string, slicerId: string): Promise<LiveWindow | undefined> {
    if (!isSafePathId(owner) || !isSafePathId(slicerId)) return undefined;
    const index = await readIfThere(livePlaylistPath(this.root, owner, slicerId));
    if (index === undefined || !index.startsWith('#EXTM3U')) return undefined;
    const dir = this.dirOf(owner, slicerId);
    return { owner, slicerId, dir, index: await this.describer.describeIndex(dir, index) };
  }

  async playlist(owner: string, slicerId: string, name: string): Promise<string | undefined> {
    if (!isSafePathId(owner) || !isSafePathId(slicerId) || !isSafePathId(name)) return undefined;
    const text = await readIfThere(join(this.dirOf(owner, slicerId), `${name}.m3u8`));
    return text?.startsWith('#EXTM3U') ? text : undefined;
  }
}
