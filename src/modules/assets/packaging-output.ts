import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { codecsByVariant, parseMediaPlaylist } from '../../platform/media/hls-media-playlist.js';
import { describeRendition, packagedManifestOf, POSTER_FILE, type PackagedManifest, type PackagedRendition } from '../../platform/media/packaged-manifest.js';
import type { RenditionPlan } from './packaging-plan.js';

/** ffmpeg's own multivariant playlist: not part of the packaged layout (the edge writes its own). */
const FFMPEG_MASTER = 'master.m3u8';

/**
 * Gives a rendition's init segment the layout's name (ffmpeg numbers it `init_<n>.mp4` when it
 * writes several renditions at once) and points its playlist at it.
 */
async function settleInitName(dir: string): Promise<void> {
  const text = await readFile(join(dir, 'playlist.m3u8'), 'utf8');
  const { init } = parseMediaPlaylist(text);
  if (init === undefined || init === 'init.mp4') return;
  await rename(join(dir, init), join(dir, 'init.mp4'));
  await writeFile(join(dir, 'playlist.m3u8.tmp'), text.replace(`URI="${init}"`, 'URI="init.mp4"'));
  await rename(join(dir, 'playlist.m3u8.tmp'), join(dir, 'playlist.m3u8'));
}

/**
 * Reads what ffmpeg wrote for each planned rendition (playlists, segment sizes, the codecs of
 * its multivariant playlist) into the manifest, and removes what is not part of the layout.
 * Throws when a rendition is missing or empty.
 */
export async function buildManifest(workDir: string, plan: readonly RenditionPlan[], segmentS: number): Promise<PackagedManifest> {
  const codecs = codecsByVariant(await readFile(join(workDir, FFMPEG_MASTER), 'utf8').catch(() => ''));
  const renditions: PackagedRendition[] = [];
  for (const r of plan) {
    await settleInitName(join(workDir, r.name));
    const variantCodecs = codecs.get(`${r.name}/playlist.m3u8`);
    if (variantCodecs === undefined) throw new Error(`ffmpeg named no codecs for rendition ${r.name}`);
    renditions.push(await describeRendition(workDir, { name: r.name, width: r.width, height: r.height, codecs: variantCodecs }));
  }
  await rm(join(workDir, FFMPEG_MASTER), { force: true });
  return packagedManifestOf(renditions, segmentS, POSTER_FILE);
}
