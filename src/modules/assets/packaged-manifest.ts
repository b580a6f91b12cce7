import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { RenditionPlan } from './packaging-plan.js';

/**
 * `manifest.json` of a packaged asset: the contract between the asset library (which writes
 * it, last, so that its presence means the asset is complete) and the playback edge (which
 * reads it). Paths are relative to the asset's directory.
 */
export const PackagedManifestSchema = Type.Object({
  version: Type.Literal(1),
  duration_s: Type.Number({ description: 'Packaged duration (the longest rendition), seconds' }),
  segment_s: Type.Number({ description: 'Target segment duration, seconds' }),
  poster: Type.String({ description: 'poster.jpg' }),
  renditions: Type.Array(
    Type.Object({
      name: Type.String({ description: 'e.g. 720p; also its directory' }),
      width: Type.Integer(),
      height: Type.Integer(),
      bandwidth: Type.Integer({ description: 'Peak segment bit rate, bits/s (HLS BANDWIDTH)' }),
      average_bandwidth: Type.Integer({ description: 'Average bit rate, bits/s (HLS AVERAGE-BANDWIDTH)' }),
      codecs: Type.String({ description: 'RFC 6381 codecs, e.g. avc1.64001f,mp4a.40.2' }),
      playlist: Type.String({ description: '<name>/playlist.m3u8 as ffmpeg wrote it' }),
      init: Type.String({ description: '<name>/init.mp4' }),
      segments: Type.Array(Type.Object({ uri: Type.String(), duration_s: Type.Number(), bytes: Type.Integer() })),
    }),
    { description: 'Highest first' },
  ),
});
export type PackagedManifest = Static<typeof PackagedManifestSchema>;
export type PackagedRendition = PackagedManifest['renditions'][number];

export const MANIFEST_FILE = 'manifest.json';
export const POSTER_FILE = 'poster.jpg';

interface PlaylistSegment {
  uri: string;
  durationS: number;
}

/** The init segment and media segments a VOD media playlist lists, in order. */
export function parseMediaPlaylist(text: string): { init: string | undefined; segments: PlaylistSegment[] } {
  const segments: PlaylistSegment[] = [];
  let init: string | undefined;
  let pending: number | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#EXT-X-MAP:')) init = /URI="([^"]+)"/.exec(line)?.[1];
    else if (line.startsWith('#EXTINF:')) pending = Number.parseFloat(line.slice('#EXTINF:'.length));
    else if (line !== '' && !line.startsWith('#') && pending !== undefined) {
      segments.push({ uri: line, durationS: pending });
      pending = undefined;
    }
  }
  return { init, segments };
}

/** CODECS of each variant of a multivariant playlist, by its URI. */
export function codecsByVariant(text: string): Map<string, string> {
  const found = new Map<string, string>();
  const lines = text.split('\n').map((l) => l.trim());
  lines.forEach((line, i) => {
    if (!line.startsWith('#EXT-X-STREAM-INF:')) return;
    const codecs = /CODECS="([^"]+)"/.exec(line)?.[1];
    const uri = lines.slice(i + 1).find((l) => l !== '' && !l.startsWith('#'));
    if (codecs && uri) found.set(uri, codecs);
  });
  return found;
}

const round3 = (value: number) => Math.round(value * 1000) / 1000;

/**
 * Gives a rendition's init segment the contract's name (ffmpeg numbers it `init_<n>.mp4` when it
 * writes several renditions at once) and points its playlist at it.
 */
async function settleInitName(dir: string, playlistText: string, init: string | undefined): Promise<string> {
  if (init === undefined || init === 'init.mp4') return playlistText;
  await rename(join(dir, init), join(dir, 'init.mp4'));
  const rewritten = playlistText.replace(`URI="${init}"`, 'URI="init.mp4"');
  await writeFile(join(dir, 'playlist.m3u8.tmp'), rewritten);
  await rename(join(dir, 'playlist.m3u8.tmp'), join(dir, 'playlist.m3u8'));
  return rewritten;
}

/**
 * Reads what ffmpeg wrote for each planned rendition (playlists, segment sizes, the codecs of
 * its multivariant playlist) into the manifest. Throws when a rendition is missing or empty.
 */
export async function buildManifest(workDir: string, plan: readonly RenditionPlan[], segmentS: number): Promise<PackagedManifest> {
  const master = await readFile(join(workDir, 'master.m3u8'), 'utf8').catch(() => '');
  const codecs = codecsByVariant(master);
  const renditions: PackagedRendition[] = [];
  for (const r of plan) {
    const dir = join(workDir, r.name);
    const original = await readFile(join(dir, 'playlist.m3u8'), 'utf8');
    const parsed = parseMediaPlaylist(original);
    await settleInitName(dir, original, parsed.init);
    if (parsed.segments.length === 0) throw new Error(`rendition ${r.name} has no segments`);
    const segments = await Promise.all(
      parsed.segments.map(async (s) => ({ uri: `${r.name}/${s.uri}`, duration_s: round3(s.durationS), bytes: (await stat(join(dir, s.uri))).size })),
    );
    const variantCodecs = codecs.get(`${r.name}/playlist.m3u8`);
    if (variantCodecs === undefined) throw new Error(`ffmpeg named no codecs for rendition ${r.name}`);
    const totalS = segments.reduce((sum, s) => sum + s.duration_s, 0);
    const totalBits = segments.reduce((sum, s) => sum + s.bytes * 8, 0);
    const peak = Math.max(...segments.map((s) => (s.duration_s > 0 ? (s.bytes * 8) / s.duration_s : 0)));
    renditions.push({
      name: r.name,
      width: r.width,
      height: r.height,
      bandwidth: Math.ceil(peak),
      average_bandwidth: Math.ceil(totalS > 0 ? totalBits / totalS : 0),
      codecs: variantCodecs,
      playlist: `${r.name}/playlist.m3u8`,
      init: `${r.name}/init.mp4`,
      segments,
    });
  }
  const durationS = Math.max(...renditions.map((r) => r.segments.reduce((sum, s) => sum + s.duration_s, 0)));
  return { version: 1, duration_s: round3(durationS), segment_s: segmentS, poster: POSTER_FILE, renditions };
}

/**
 * Writes manifest.json atomically (a temp file renamed over it), after removing what is not
 * part of the layout (ffmpeg's own multivariant playlist; the edge writes its own).
 */
export async function writeManifest(workDir: string, manifest: PackagedManifest): Promise<void> {
  await rm(join(workDir, 'master.m3u8'), { force: true });
  const temp = join(workDir, `${MANIFEST_FILE}.tmp`);
  await writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(temp, join(workDir, MANIFEST_FILE));
}
