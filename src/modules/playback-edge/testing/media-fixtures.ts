import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assetDir } from '../../../platform/media/media-layout.js';
import { POSTER_FILE, writeManifest, writeProgressiveManifest, type PackagedManifest, type PackagedRendition } from '../../../platform/media/packaged-manifest.js';

export { packageTestPattern as packageWithFfmpeg, type TestPatternOptions } from '../../../simulator/pattern-clip.js';

/**
 * Packaged assets for tests and benchmarks, in the layout the asset library writes (`assetDir`
 * of the media layout, manifest.json written last through the one writer, and the files it
 * names). `writeFakeAsset` needs no ffmpeg (valid playlists, small placeholder files) for route
 * tests; `packageWithFfmpeg` (the simulator's pattern-clip.ts) makes real, playable fMP4 HLS for
 * player tests.
 */

export interface FakeRendition {
  name: string;
  width: number;
  height: number;
  bandwidth: number;
}

export interface FakeAssetOptions {
  renditions?: FakeRendition[];
  /** Segment durations in seconds; default 4, 4, 2 (a 10 s asset). */
  durations?: number[];
  /** Bytes of each media segment; default 188. */
  segmentBytes?: number;
  /**
   * Still being packaged: the asset will last this long (seconds), and `durations` are its
   * segments so far, described in progressive.json as the asset library writes it while packaging.
   */
  progressiveExpectedS?: number;
}

export const FAKE_RENDITIONS: FakeRendition[] = [
  { name: '360p', width: 640, height: 360, bandwidth: 900_000 },
  { name: '180p', width: 320, height: 180, bandwidth: 300_000 },
];

/** The bytes of a fake segment: recognisable (asset, rendition, index) and of the requested size. */
export const fakeSegmentBytes = (assetId: string, rendition: string, index: number, size: number): Buffer => {
  const label = Buffer.from(`${assetId}/${rendition}/seg ${index};`);
  const bytes = Buffer.alloc(size);
  for (let at = 0; at < size; at += label.length) label.copy(bytes, at, 0, Math.min(label.length, size - at));
  return bytes;
};

/** A packaged asset whose files are placeholders (not media): for the edge's routes, which never decode them. */
export async function writeFakeAsset(root: string, owner: string, assetId: string, options: FakeAssetOptions = {}): Promise<PackagedManifest> {
  const dir = assetDir(root, owner, assetId);
  const durations = options.durations ?? [4, 4, 2];
  const size = options.segmentBytes ?? 188;
  const renditions: PackagedRendition[] = [];
  for (const r of options.renditions ?? FAKE_RENDITIONS) {
    await mkdir(join(dir, r.name), { recursive: true });
    await writeFile(join(dir, r.name, 'init.mp4'), Buffer.from(`${assetId}/${r.name}/init`));
    const segments = [];
    for (const [i, d] of durations.entries()) {
      const uri = `${r.name}/seg_${String(i).padStart(5, '0')}.m4s`;
      await writeFile(join(dir, uri), fakeSegmentBytes(assetId, r.name, i, size));
      segments.push({ uri, duration_s: d, bytes: size });
    }
    const playlist = ['#EXTM3U', '#EXT-X-VERSION:7', `#EXT-X-TARGETDURATION:${Math.ceil(Math.max(...durations))}`, '#EXT-X-MAP:URI="init.mp4"', ...segments.flatMap((s) => [`#EXTINF:${s.duration_s.toFixed(6)},`, s.uri.slice(r.name.length + 1)]), '#EXT-X-ENDLIST'];
    await writeFile(join(dir, r.name, 'playlist.m3u8'), `${playlist.join('\n')}\n`);
    renditions.push({ ...r, average_bandwidth: Math.round(r.bandwidth * 0.8), codecs: 'avc1.64001f,mp4a.40.2', playlist: `${r.name}/playlist.m3u8`, init: `${r.name}/init.mp4`, segments });
  }
  const durationS = durations.reduce((a, b) => a + b, 0);
  if (options.progressiveExpectedS !== undefined) {
    const progressive = { version: 1 as const, duration_s: durationS, segment_s: 4, renditions, expected_duration_s: options.progressiveExpectedS };
    await writeProgressiveManifest(dir, progressive);
    return progressive;
  }
  const manifest: PackagedManifest = { version: 1, duration_s: durationS, segment_s: Math.max(...durations), poster: POSTER_FILE, renditions };
  await writeFile(join(dir, POSTER_FILE), Buffer.from('not a jpeg'));
  await writeManifest(dir, manifest);
  return manifest;
}

