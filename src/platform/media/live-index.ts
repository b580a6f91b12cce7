import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LiveStreamDescriber, namesNoVariant } from './live-stream-inf.js';
import { LIVE_INDEX_FILE } from './media-layout.js';

/** What `check` did: nothing to do, waiting for a segment to measure, or index.m3u8 written anew. */
export type IndexCheck = 'unchanged' | 'playable' | 'waiting' | 'rewritten';

/**
 * Keeps a live window's `index.m3u8` playable for everything that reads it from disk (publishing's
 * ffmpeg, the edge, the pull URL, an operator's player). ffmpeg writes it once per run and leaves out
 * every variant whose bit rate it does not know: stream copy of a pushed HLS source (hls push,
 * `passthrough`) gets `#EXTM3U / #EXT-X-VERSION:7` and nothing else, which no player can open.
 * Such an index is written anew (a temporary file renamed over it) as the live describer gives it:
 * the window's one media playlist as its variant, with the BANDWIDTH, CODECS and RESOLUTION
 * measured from the window, as soon as a segment can be measured. The slicer calls `check` on
 * each progress of its ffmpeg; it costs one stat while the file stays as it was last found.
 */
export class LiveIndexKeeper {
  /** The version (inode, size, mtime) of index.m3u8 last found playable or written here. */
  private settled: string | undefined;
  private inFlight: Promise<IndexCheck> | undefined;

  constructor(
    private readonly dir: string,
    private readonly describer: LiveStreamDescriber = new LiveStreamDescriber(),
  ) {}

  /** Looks at index.m3u8 now (one check at a time; a call during one gets its answer). */
  check(): Promise<IndexCheck> {
    this.inFlight ??= this.repair().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async repair(): Promise<IndexCheck> {
    const path = join(this.dir, LIVE_INDEX_FILE);
    const before = await versionOf(path);
    if (before === undefined || before === this.settled) return 'unchanged';
    const index = await readFile(path, 'utf8');
    if (!namesNoVariant(index)) {
      this.settled = before;
      return 'playable';
    }
    const described = await this.describer.describeIndex(this.dir, index);
    if (namesNoVariant(described)) return 'waiting';
    // A dot name: no reader of the window serves it, and ffmpeg's own `index.m3u8.tmp` is another file.
    const temp = join(this.dir, `.${LIVE_INDEX_FILE}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await writeFile(temp, described);
      // The version a rename keeps (inode, size, mtime): should ffmpeg write the file again after it, that is seen.
      const written = await versionOf(temp);
      await rename(temp, path);
      this.settled = written;
    } finally {
      await rm(temp, { force: true });
    }
    return 'rewritten';
  }
}

async function versionOf(path: string): Promise<string | undefined> {
  const found = await stat(path).catch(() => undefined);
  return found?.isFile() ? `${found.ino}:${found.size}:${found.mtimeMs}` : undefined;
}
