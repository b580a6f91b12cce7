import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tracksOfInit } from '../../platform/media/fmp4-tracks.js';
import { codecsByVariant, parseMediaPlaylist, type PlaylistSegment } from '../../platform/media/hls-media-playlist.js';
import {
  describeRendition,
  packagedManifestOf,
  POSTER_FILE,
  renditionOf,
  round3,
  type PackagedManifest,
  type PackagedRendition,
  type ProgressiveManifest,
} from '../../platform/media/packaged-manifest.js';
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

/** A file of the work directory and the name it has in the asset's directory (the init segment's differs). */
export interface ProgressiveLink {
  from: string;
  to: string;
}

/** What of a running packaging can be played: the manifest of the segments every rendition has, and the files it names. */
export interface ProgressiveOutput {
  manifest: ProgressiveManifest;
  links: ProgressiveLink[];
}

/**
 * The part of a running packaging that can be played: for each planned rendition, the segments
 * its playlist lists (ffmpeg writes an EVENT playlist after each closed segment, so a listed
 * segment is complete), cut to the count every rendition has, so every variant offers the same
 * seconds. Codecs come from each init segment's sample entries (ffmpeg's multivariant playlist
 * is only complete at the end). Undefined while a rendition has no segment yet.
 */
export async function progressiveOutputOf(
  workDir: string,
  plan: readonly RenditionPlan[],
  segmentS: number,
  expectedS: number,
  /** Sizes of segments read before (a listed segment never changes): kept by the caller across looks. */
  sizes = new Map<string, number>(),
): Promise<ProgressiveOutput | undefined> {
  const listed: Array<{ plan: RenditionPlan; init: string; segments: PlaylistSegment[] }> = [];
  for (const r of plan) {
    const text = await readFile(join(workDir, r.name, 'playlist.m3u8'), 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    const { init, segments } = parseMediaPlaylist(text);
    if (init === undefined || segments.length === 0) return undefined;
    listed.push({ plan: r, init, segments });
  }
  const count = Math.min(...listed.map((l) => l.segments.length));
  const renditions: PackagedRendition[] = [];
  const links: ProgressiveLink[] = [];
  for (const { plan: r, init, segments } of listed) {
    const tracks = tracksOfInit(await readFile(join(workDir, r.name, init)));
    const codecs = tracks.map((t) => t.codec).filter((c): c is string => c !== undefined);
    if (codecs.length === 0) return undefined;
    const kept = segments.slice(0, count);
    const described = await Promise.all(
      kept.map(async (s) => {
        const uri = `${r.name}/${s.uri}`;
        let bytes = sizes.get(uri);
        if (bytes === undefined) {
          bytes = (await stat(join(workDir, uri))).size;
          sizes.set(uri, bytes);
        }
        return { uri, duration_s: round3(s.durationS), bytes };
      }),
    );
    const rendition = renditionOf({ name: r.name, width: r.width, height: r.height, codecs: codecs.join(',') }, `${r.name}/init.mp4`, described);
    // A few first segments say little of the peak to come: BANDWIDTH is at least the planned rate cap.
    const plannedPeak = Math.round((r.videoKbps * 1.1 + r.audioKbps) * 1000);
    renditions.push({ ...rendition, bandwidth: Math.max(rendition.bandwidth, plannedPeak), average_bandwidth: Math.max(rendition.average_bandwidth, 1) });
    links.push({ from: `${r.name}/${init}`, to: `${r.name}/init.mp4` }, ...described.map((s) => ({ from: s.uri, to: s.uri })));
  }
  const packaged = packagedManifestOf(renditions, segmentS);
  return { manifest: { ...packaged, expected_duration_s: round3(Math.max(expectedS, packaged.duration_s)) }, links };
}
