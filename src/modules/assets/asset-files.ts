import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { directoryBytes } from '../../platform/quota/directory-bytes.js';
import { dirname, join } from 'node:path';
import { assetDir, assetLibraryDirs, assetWorkDir, attemptDir, sourcePath } from '../../platform/media/media-layout.js';
import { POSTER_FILE } from '../../platform/media/packaged-manifest.js';
import { killMarkedProcess } from '../../platform/media/process-marker.js';

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
 * moves are renames inside one file system, so a reader never sees half an asset.
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
    await rm(target, { recursive: true, force: true });
    await mkdir(dirname(target), { recursive: true });
    await rename(workDir, target);
    await rm(assetWorkDir(this.root, owner, assetId), { recursive: true, force: true });
  }

  /** Bytes of a packaged asset's files (its directory and the rendition folders in it). */
  async packagedBytes(owner: string, assetId: string): Promise<number> {
    return directoryBytes(this.assetDir(owner, assetId), 2);
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
