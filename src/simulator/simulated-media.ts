import { createHash } from 'node:crypto';
import { copyFile, link, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { assetDir, simulatorClipDir } from '../platform/media/media-layout.js';
import { MANIFEST_FILE, readPackagedManifest, writeManifest } from '../platform/media/packaged-manifest.js';
import { packageTestPatternInto } from './pattern-clip.js';

export interface SimulatedMediaInput {
  /** The server's media root. */
  root: string;
  owners: readonly string[];
  assetsPerOwner: number;
  ffmpeg?: string;
}

export interface SimulatedMedia {
  /** The asset ids of an owner's simulated assets (32-hex, like the library's). */
  assetsOf(owner: string): string[];
  /** The owner's ad asset. */
  adOf(owner: string): string;
}

/** Stable ids per owner, so a second run plays the assets the first one placed. */
const idOf = (owner: string, name: string) => createHash('sha256').update(`playline simulate ${owner} ${name}`).digest('hex').slice(0, 32);

/** The clip's version in the media root: bump it when its recipe changes. */
const CLIP_VERSION = 'clip-v1';

const exists = async (path: string) => stat(path).then(() => true, () => false);

/** Hard links when the file system allows (no copy per asset), copies otherwise. */
async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if (entry.name === MANIFEST_FILE || entry.name.startsWith('.')) continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) await linkTree(source, target);
    else if (!(await exists(target))) await link(source, target).catch(() => copyFile(source, target));
  }
}

/**
 * Packages the simulator's assets where the server reads them: one short clip (4 s of test
 * pattern and tone, 160x90, two 2 s segments) generated with ffmpeg once per media root, then
 * linked as every simulated asset and ad of every owner (the manifest written last, as the
 * asset library does). Until assets can be uploaded through the API, this is how `playline
 * simulate` gets packaged media: it runs on the server's machine, or against a shared media root.
 */
export async function placeSimulatedMedia(input: SimulatedMediaInput): Promise<SimulatedMedia> {
  const template = simulatorClipDir(input.root, CLIP_VERSION);
  if (!(await exists(join(template, MANIFEST_FILE)))) {
    try {
      await packageTestPatternInto(template, {
        seconds: 4,
        segmentS: 2,
        renditions: [{ name: '90p', width: 160, height: 90, videoKbps: 100 }],
        ...(input.ffmpeg ? { ffmpeg: input.ffmpeg } : {}),
      });
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
      throw new Error(missing ? 'playline simulate makes its clip with ffmpeg, which is not installed here (apt-get install ffmpeg)' : `ffmpeg could not make the simulator's clip: ${(error as Error).message}`, { cause: error });
    }
  }
  const manifest = await readPackagedManifest(template);
  const assets = new Map<string, string[]>();
  for (const owner of input.owners) {
    const ids = Array.from({ length: input.assetsPerOwner }, (_, k) => idOf(owner, `asset-${k + 1}`));
    assets.set(owner, ids);
    for (const id of [...ids, idOf(owner, 'ad')]) {
      const dir = assetDir(input.root, owner, id);
      if (await exists(join(dir, MANIFEST_FILE))) continue;
      await linkTree(template, dir);
      await writeManifest(dir, manifest);
    }
  }
  return { assetsOf: (owner) => assets.get(owner) ?? [], adOf: (owner) => idOf(owner, 'ad') };
}
