import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface DirectoryTally {
  bytes: number;
  files: number;
}

/**
 * Bytes and files under `dir`, at most `depth` levels of folders down (a packaged asset is two:
 * its folder and its renditions'; a workspace's live folders three). Dotfiles are left out: they
 * are writes under way, held in a storage reservation until they are renamed into place. A
 * folder that is missing or vanishes meanwhile counts as empty. With `seen`, a file linked more
 * than once (a recorded live segment is a hard link of the live window's) counts once across the
 * calls sharing it.
 */
export async function directoryTally(dir: string, depth: number, seen?: Set<string>): Promise<DirectoryTally> {
  const tally = { bytes: 0, files: 0 };
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (depth <= 1) continue;
      const inner = await directoryTally(path, depth - 1, seen);
      tally.bytes += inner.bytes;
      tally.files += inner.files;
    } else if (entry.isFile()) {
      const info = await stat(path).catch(() => undefined);
      if (!info) continue;
      if (seen && info.nlink > 1) {
        const id = `${info.dev}:${info.ino}`;
        if (seen.has(id)) continue;
        seen.add(id);
      }
      tally.bytes += info.size;
      tally.files += 1;
    }
  }
  return tally;
}

export const directoryBytes = async (dir: string, depth: number): Promise<number> => (await directoryTally(dir, depth)).bytes;
