import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../platform/clock.js';
import { assetDir, isSafePathId } from '../../platform/media/media-layout.js';
import { MANIFEST_FILE, parsePackagedManifest, parseProgressiveManifest, PROGRESSIVE_FILE, type PackagedManifest, type PackagedRendition } from '../../platform/media/packaged-manifest.js';

/** A packaged asset as the edge plays it: its manifest, where its files are, and which files a session may fetch. */
export interface PackagedAsset {
  owner: string;
  assetId: string;
  /** Absolute directory holding manifest.json and the files it names. */
  dir: string;
  manifest: PackagedManifest;
  renditions: ReadonlyMap<string, PackagedRendition>;
  /** Every init segment and media segment the manifest names (paths relative to `dir`). */
  files: ReadonlySet<string>;
  /** The init segments among `files` (each rendition's, and those of later periods). */
  inits: ReadonlySet<string>;
  /**
   * False while the asset is still being packaged (progressive.json): its manifest holds the
   * segments packaged so far, `expectedDurationS` what it will last, and it plays as an EVENT playlist.
   */
  complete: boolean;
  expectedDurationS: number;
}

/** The port to the asset library's packaged output: read-only, no database. */
export interface MediaLibrary {
  /**
   * The packaged asset (complete, or still being packaged but playable), or undefined when the
   * workspace's library does not hold it (or nothing of it plays yet).
   */
  find(owner: string, assetId: string): Promise<PackagedAsset | undefined>;
}

interface Entry {
  asset: PackagedAsset | undefined;
  /** When the manifest was last looked at (clock ms). */
  checkedAt: number;
  /** The manifest file's identity when read: a rewrite (new inode or mtime) is read again. */
  version: string;
}

export interface FileMediaLibraryOptions {
  /** The media root (`<data dir>/media` or PLAYLINE_MEDIA_DIR). */
  root: string;
  clock: Clock;
  /** How long a looked-up manifest is trusted before its file is checked again (deletion shows within it). Default 1000 ms. */
  revalidateMs?: number;
  /** Assets remembered at most (least recently used dropped first). Default 10,000. */
  maxEntries?: number;
  onError?: (message: string, error: unknown) => void;
}

const versionOf = (s: { ino: number; mtimeMs: number; size: number }) => `${s.ino}:${s.mtimeMs}:${s.size}`;

/** The asset `manifest` describes; `expectedDurationS` only while it is still being packaged. */
export function toPackagedAsset(owner: string, assetId: string, dir: string, manifest: PackagedManifest, expectedDurationS?: number): PackagedAsset {
  const files = new Set<string>();
  const inits = new Set<string>();
  for (const r of manifest.renditions) {
    inits.add(r.init);
    for (const s of r.segments) {
      files.add(s.uri);
      if (s.init !== undefined) inits.add(s.init);
    }
  }
  for (const init of inits) files.add(init);
  const complete = expectedDurationS === undefined;
  return { owner, assetId, dir, manifest, renditions: new Map(manifest.renditions.map((r) => [r.name, r])), files, inits, complete, expectedDurationS: expectedDurationS ?? manifest.duration_s };
}

/** The manifest file's identity, or undefined when there is none (or no such directory). */
async function versionOfFile(file: string): Promise<string | undefined> {
  try {
    return versionOf(await stat(file));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/**
 * Reads the manifests of packaged assets (`assetDir` of the media layout) through the one parser.
 * A manifest read once is reused and its file checked again (one stat) once `revalidateMs` has
 * passed, so a popular asset costs no file read per request while a deleted or repackaged asset
 * shows within that time. Lookups of the same asset at the same moment share one read. An asset
 * still being packaged is read from its progressive.json (so its new segments show within that
 * time too) until its manifest.json is in place.
 */
export class FileMediaLibrary implements MediaLibrary {
  private readonly entries: LRUCache<string, Entry>;
  private readonly loading = new Map<string, Promise<PackagedAsset | undefined>>();
  private readonly revalidateMs: number;

  constructor(private readonly options: FileMediaLibraryOptions) {
    this.revalidateMs = options.revalidateMs ?? 1000;
    this.entries = new LRUCache({ max: options.maxEntries ?? 10_000 });
  }

  find(owner: string, assetId: string): Promise<PackagedAsset | undefined> {
    // An id that cannot name a directory is in no library.
    if (!isSafePathId(owner) || !isSafePathId(assetId)) return Promise.resolve(undefined);
    const key = `${owner}/${assetId}`;
    const entry = this.entries.get(key);
    if (entry && this.options.clock.now() - entry.checkedAt < this.revalidateMs) return Promise.resolve(entry.asset);
    const pending = this.loading.get(key);
    if (pending) return pending;
    const load = this.load(owner, assetId, key, entry).finally(() => this.loading.delete(key));
    this.loading.set(key, load);
    return load;
  }

  private async load(owner: string, assetId: string, key: string, previous: Entry | undefined): Promise<PackagedAsset | undefined> {
    const dir = assetDir(this.options.root, owner, assetId);
    const checkedAt = this.options.clock.now();
    // manifest.json once packaged; before, progressive.json while what is packaged so far plays.
    let file = join(dir, MANIFEST_FILE);
    let version: string | undefined;
    try {
      version = await versionOfFile(file);
      if (version === undefined) {
        file = join(dir, PROGRESSIVE_FILE);
        version = await versionOfFile(file);
        if (version !== undefined) version = `progressive:${version}`;
      }
    } catch (error) {
      this.options.onError?.(`cannot read ${file}`, error);
      version = undefined;
    }
    if (version === undefined) {
      this.entries.set(key, { asset: undefined, checkedAt, version: '' });
      return undefined;
    }
    if (previous && previous.version === version) {
      this.entries.set(key, { ...previous, checkedAt });
      return previous.asset;
    }
    let asset: PackagedAsset | undefined;
    try {
      const text = await readFile(file, 'utf8');
      if (file.endsWith(PROGRESSIVE_FILE)) {
        const progressive = parseProgressiveManifest(text);
        asset = toPackagedAsset(owner, assetId, dir, progressive, progressive.expected_duration_s);
      } else {
        asset = toPackagedAsset(owner, assetId, dir, parsePackagedManifest(text));
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && file.endsWith(PROGRESSIVE_FILE)) {
        // Replaced by manifest.json between the stat and the read: the asset is complete now.
        return this.load(owner, assetId, key, undefined);
      }
      // A manifest that breaks the contract is an asset the edge cannot play: not packaged.
      this.options.onError?.(`${file} is not a valid packaged manifest`, error);
      asset = undefined;
    }
    this.entries.set(key, { asset, checkedAt, version });
    return asset;
  }
}
