import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What several test files need and costs seconds to make (the built package, encoded media):
 * made once per recipe and shared by every test process of the machine, in
 * `<tmpdir>/playline-test-cache/<kind>/<hash of the recipe>`. An entry is made in a temporary
 * directory beside it and renamed into place, so a reader never sees half of one and two
 * processes making the same entry at once both end with a whole one (the second rename loses and
 * its copy is removed). An entry is immutable: callers copy what they will change.
 */
const cacheRoot = join(tmpdir(), 'playline-test-cache');

/** Entries unused this long are removed (each use touches its entry); so are makings abandoned this long. */
const UNUSED_MS = 3 * 24 * 3600_000;
const ABANDONED_MS = 3600_000;

const made = new Map<string, Promise<string>>();
const pruned = new Set<string>();

export const recipeHash = (recipe: string): string => createHash('sha256').update(recipe).digest('hex').slice(0, 20);

/** Best effort: a process that crashed mid-making, or recipes nobody has used for days. */
async function prune(kindDir: string): Promise<void> {
  if (pruned.has(kindDir)) return;
  pruned.add(kindDir);
  const now = Date.now();
  for (const name of await readdir(kindDir).catch(() => [])) {
    const path = join(kindDir, name);
    const age = now - ((await stat(path).catch(() => undefined))?.mtimeMs ?? now);
    if (age > (name.startsWith('.') ? ABANDONED_MS : UNUSED_MS)) await rm(path, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * The directory holding what `make` writes for `recipe` (everything that decides the result:
 * the tool's arguments, the source hashes), making it the first time.
 */
export function sharedArtifact(kind: string, recipe: string, make: (dir: string) => Promise<void>): Promise<string> {
  const kindDir = join(cacheRoot, kind);
  const final = join(kindDir, recipeHash(recipe));
  let entry = made.get(final);
  if (!entry) {
    entry = (async () => {
      await mkdir(kindDir, { recursive: true });
      await prune(kindDir);
      if (existsSync(final)) {
        const now = new Date();
        await utimes(final, now, now).catch(() => undefined);
        return final;
      }
      const temp = await mkdtemp(join(kindDir, `.${recipeHash(recipe)}-`));
      try {
        await make(temp);
        await rename(temp, final);
      } catch (err) {
        await rm(temp, { recursive: true, force: true });
        // Another process renamed its copy into place first: use that one.
        const code = (err as NodeJS.ErrnoException).code;
        if (!((code === 'ENOTEMPTY' || code === 'EEXIST') && existsSync(final))) throw err;
      }
      return final;
    })();
    // A failed making is not remembered: the next caller tries again (and sees the error itself).
    entry.catch(() => made.delete(final));
    made.set(final, entry);
  }
  return entry;
}
