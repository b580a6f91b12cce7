import { readLiveWindow, type LiveWindowState } from '../../platform/media/live-window.js';
import { isSafePathId, liveDir } from '../../platform/media/media-layout.js';

/** A slicer's live window as the edge plays it: where its files are and its state (the live window contract) as it stands. */
export interface LiveWindow {
  owner: string;
  slicerId: string;
  /** Absolute directory of the window's segments and parts. */
  dir: string;
  state: LiveWindowState;
}

/** The port to the slicers' live output: read-only, never cached here (a live window changes every part). */
export interface LiveLibrary {
  /** The slicer's live window once it holds a segment, or undefined when the workspace has no such slicer output (yet). */
  find(owner: string, slicerId: string): Promise<LiveWindow | undefined>;
  /** The directory of a slicer's window (whether or not it exists). */
  dirOf(owner: string, slicerId: string): string;
}

/** Reads the live windows slicers write (`liveDir` in the media layout) through their `live.json`. */
export class FileLiveLibrary implements LiveLibrary {
  constructor(private readonly root: string) {}

  dirOf(owner: string, slicerId: string): string {
    return liveDir(this.root, owner, slicerId);
  }

  async find(owner: string, slicerId: string): Promise<LiveWindow | undefined> {
    if (!isSafePathId(owner) || !isSafePathId(slicerId)) return undefined;
    const dir = this.dirOf(owner, slicerId);
    const state = await readLiveWindow(dir);
    // Players are offered a window once it holds a segment (and a variant can be described).
    if (!state?.renditions.some((r) => r.segments.length > 0 && r.bandwidth !== undefined)) return undefined;
    return { owner, slicerId, dir, state };
  }
}
