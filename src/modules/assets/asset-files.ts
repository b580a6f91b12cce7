import { randomUUID } from 'node:crypto';
import { link, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { directoryBytes } from '../../platform/quota/directory-bytes.js';
import { dirname, join, relative } from 'node:path';
import { assetDir, assetLibraryDirs, assetWorkDir, attemptDir, sourcePath } from '../../platform/media/media-layout.js';
import { MANIFEST_FILE, POSTER_FILE, PROGRESSIVE_FILE, writeProgressiveManifest } from '../../platform/media/packaged-manifest.js';
import { killMarkedProcess } from '../../platform/media/process-marker.js';
import type { ProgressiveLink, ProgressiveOutput } from './packaging-output.js';

/** The marker of the media process working in an attempt directory. */
const MARKER_FILE = '.process.json';

/** The directory an attempt packages into, and where its media process is recorded. */
export interface AttemptFiles {
  workDir: string;
  markerFile: string;
}

/**
 * The asset library's files in the media root (layout in media-layout.ts), and the only code
 * that writes or deletes them: uploads, sources, packaging attempts and packaged assets.
 * Packaged assets are moved into place whole, manifest.json included, once complete: directory
 * moves are renames inside one file system, so a reader never sees half an asset. An asset that
 * became playable while packaged (`publishProgressive`) has its segments in place already, as
 * hard links to the attempt's files under the same names: its remaining files are linked in the
 * same way, then manifest.json replaces progressive.json, so a player never sees a file move.
 */
export class AssetFiles {
  constructor(readonly root: string) {}

  get uploadsDir(): string {
    return assetLibraryDirs(this.root).uploads;
  }

  async prepare(): Promise<void> {
    for (const dir of Object.values(assetLibraryDirs(this.root))) await mkdir(dir, { recursive: true });
  }

  /** A fresh path for an upload being received. */
  newUploadPath(): string {
    return join(this.uploadsDir, `${randomUUID()}.part`);
  }

  sourcePath(owner: string, assetId: string): string {
    return sourcePath(this.root, owner, assetId);
  }

  assetDir(owner: string, assetId: string): string {
    return assetDir(this.root, owner, assetId);
  }

  posterPath(owner: string, assetId: string): string {
    return join(this.assetDir(owner, assetId), POSTER_FILE);
  }

  /** Takes a received upload as the source of a new asset. */
  async adoptUpload(uploadPath: string, owner: string, assetId: string): Promise<void> {
    const target = this.sourcePath(owner, assetId);
    await mkdir(dirname(target), { recursive: true });
    await rename(uploadPath, target);
  }

  /**
   * Takes a finished recording (its manifest.json, poster and renditions written in `dir`, inside
   * the media root) as the packaged asset: one rename, so the asset appears whole.
   */
  async adoptRecording(dir: string, owner: string, assetId: string): Promise<void> {
    const target = this.assetDir(owner, assetId);
    await mkdir(dirname(target), { recursive: true });
    await rename(dir, target);
  }

  async hasSource(owner: string, assetId: string): Promise<boolean> {
    return stat(this.sourcePath(owner, assetId)).then((s) => s.isFile(), () => false);
  }

  /**
   * A clean, empty directory for attempt `attempt`: a media process an earlier attempt left
   * running on this host (its server was killed) is stopped, and every earlier output removed.
   */
  async prepareAttempt(owner: string, assetId: string, attempt: number): Promise<AttemptFiles> {
    await this.removeOutputs(owner, assetId);
    const workDir = attemptDir(this.root, owner, assetId, attempt);
    await mkdir(workDir, { recursive: true });
    return { workDir, markerFile: join(workDir, MARKER_FILE) };
  }

  /** Moves a complete attempt into place as the packaged asset. */
  async publish(owner: string, assetId: string, workDir: string): Promise<void> {
    await rm(join(workDir, MARKER_FILE), { force: true });
    const target = this.assetDir(owner, assetId);
    const progressive = await stat(join(target, PROGRESSIVE_FILE)).then(() => true, () => false);
    if (progressive) {
      // Played already: every file gets its name beside the ones served, manifest.json last.
      const names = (await readdir(workDir, { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile() && !e.name.startsWith('.') && e.name !== MANIFEST_FILE)
        .map((e) => relative(workDir, join(entryDir(e, workDir), e.name)));
      for (const name of names) await linkInto(workDir, target, { from: name, to: name });
      await linkInto(workDir, target, { from: MANIFEST_FILE, to: MANIFEST_FILE });
      await rm(join(target, PROGRESSIVE_FILE), { force: true });
    } else {
      await rm(target, { recursive: true, force: true });
      await mkdir(dirname(target), { recursive: true });
      await rename(workDir, target);
    }
    await rm(assetWorkDir(this.root, owner, assetId), { recursive: true, force: true });
  }

  /**
   * Makes what a running packaging wrote so far playable: the files `output` names that are not in
   * place yet (`placed`, kept by the caller across calls) are linked into the asset's directory,
   * then its progressive.json is written (after the files it names). The attempt's directory is
   * left as ffmpeg writes it.
   */
  async publishProgressive(owner: string, assetId: string, workDir: string, output: ProgressiveOutput, placed: Set<string>): Promise<void> {
    const target = this.assetDir(owner, assetId);
    for (const r of output.manifest.renditions) await mkdir(join(target, r.name), { recursive: true });
    for (const l of output.links) {
      if (placed.has(l.to)) continue;
      await linkInto(workDir, target, l);
      placed.add(l.to);
    }
    await writeProgressiveManifest(target, output.manifest);
  }

  /** Bytes of a packaged asset's files (its directory and the rendition folders in it). */
  async packagedBytes(owner: string, assetId: string): Promise<number> {
    return directoryBytes(this.assetDir(owner, assetId), 2);
  }

  /** Bytes of the kept upload of an asset (0 when there is none). */
  async sourceBytes(owner: string, assetId: string): Promise<number> {
    return stat(this.sourcePath(owner, assetId)).then((s) => (s.isFile() ? s.size : 0), () => 0);
  }

  async removeSource(owner: string, assetId: string): Promise<void> {
    await rm(this.sourcePath(owner, assetId), { force: true });
  }

  /** Stops leftover media processes of the asset (on this host) and removes its work and packaged output. */
  async removeOutputs(owner: string, assetId: string): Promise<void> {
    const workRoot = assetWorkDir(this.root, owner, assetId);
    const attempts = await readdir(workRoot).catch(() => [] as string[]);
    for (const attempt of attempts) await killMarkedProcess(join(workRoot, attempt, MARKER_FILE));
    await rm(workRoot, { recursive: true, force: true });
    await rm(this.assetDir(owner, assetId), { recursive: true, force: true });
  }

  /** Everything of one asset: source, work and packaged output. */
  async removeAll(owner: string, assetId: string): Promise<void> {
    await this.removeOutputs(owner, assetId);
    await this.removeSource(owner, assetId);
  }

  /**
   * Removes uploads that are no longer being received: every one when this process is the only
   * writer (embedded mode, at start), else those untouched for `idleMs` (a dead instance's).
   */
  async sweepUploads(now: number, idleMs: number | 'all'): Promise<number> {
    const names = await readdir(this.uploadsDir).catch(() => [] as string[]);
    let removed = 0;
    for (const name of names) {
      const path = join(this.uploadsDir, name);
      const info = await stat(path).catch(() => undefined);
      if (!info || (idleMs !== 'all' && now - info.mtimeMs < idleMs)) continue;
      await rm(path, { force: true, recursive: true });
      removed += 1;
    }
    return removed;
  }
}

/** The directory of an entry of a recursive readdir (Node 20.1+ sets it on the entry). */
const entryDir = (entry: object, dir: string): string => (entry as { parentPath?: string; path?: string }).parentPath ?? (entry as { path?: string }).path ?? dir;

/**
 * Gives `from` (in `fromDir`) the name `to` in `toDir` as a hard link (same file, no copy), in one
 * step: a name that holds another file is replaced by a rename, never left missing.
 */
async function linkInto(fromDir: string, toDir: string, l: ProgressiveLink): Promise<void> {
  const from = join(fromDir, l.from);
  const to = join(toDir, l.to);
  await mkdir(dirname(to), { recursive: true });
  try {
    await link(from, to);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const [a, b] = await Promise.all([stat(from), stat(to)]);
  if (a.ino === b.ino && a.dev === b.dev) return;
  const temp = join(dirname(to), `.${randomUUID()}.link`);
  await link(from, temp);
  await rename(temp, to).catch(async (error: unknown) => {
    await rm(temp, { force: true });
    throw error;
  });
}
