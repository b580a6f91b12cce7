import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FMP4_SEGMENT_OPTIONS, H264_IN_BAND_PARAMETER_SETS } from '../platform/media/fmp4-for-players.js';
import { assetDir } from '../platform/media/media-layout.js';
import { describeRendition, packagedManifestOf, writeManifest, type PackagedManifest, type PackagedRendition } from '../platform/media/packaged-manifest.js';

/**
 * Packages a generated test pattern (a broadcast test card) with a tone into the packaged
 * layout, with ffmpeg: what `playline simulate` plays, and what media tests play without
 * uploading through the asset library.
 */

const run = promisify(execFile);

export interface TestPatternOptions {
  /** Seconds of test pattern and tone. Default 10. */
  seconds?: number;
  /** Renditions to encode; default one 320x180. */
  renditions?: Array<{ name: string; width: number; height: number; videoKbps: number }>;
  /** Segment length in seconds. Default 4. */
  segmentS?: number;
  /** The tone's frequency (tells ads from content by ear). Default 440. */
  frequency?: number;
  /** lavfi video source: `testsrc2` (default) or `smptebars` (ads). */
  pattern?: 'testsrc2' | 'smptebars';
  ffmpeg?: string;
}

/** H.264 High 3.1 and AAC-LC, as the encoding below asks for. */
const CODECS = 'avc1.64001f,mp4a.40.2';

/**
 * Encodes a clip of lavfi test pattern and sine tone as the packaged asset `assetId` of `owner`
 * in the media root `root`: H.264 High 3.1 + AAC-LC, keyframes forced every `segmentS` (aligned
 * across renditions), fMP4 HLS segments. Small and quick (320x180: well under a second per
 * rendition).
 */
export async function packageTestPattern(root: string, owner: string, assetId: string, options: TestPatternOptions = {}): Promise<PackagedManifest> {
  return packageTestPatternInto(assetDir(root, owner, assetId), options);
}

/** The same, into any directory (a template the simulator links its assets from). */
export async function packageTestPatternInto(dir: string, options: TestPatternOptions = {}): Promise<PackagedManifest> {
  const seconds = options.seconds ?? 10;
  const segmentS = options.segmentS ?? 4;
  const fps = 25;
  const renditions: PackagedRendition[] = [];
  for (const r of options.renditions ?? [{ name: '180p', width: 320, height: 180, videoKbps: 300 }]) {
    await mkdir(join(dir, r.name), { recursive: true });
    await run(options.ffmpeg ?? 'ffmpeg', [
      '-hide_banner', '-loglevel', 'error', '-y',
      '-f', 'lavfi', '-i', `${options.pattern ?? 'testsrc2'}=size=${r.width}x${r.height}:rate=${fps}`,
      '-f', 'lavfi', '-i', `sine=frequency=${options.frequency ?? 440}:sample_rate=48000`,
      '-t', String(seconds),
      '-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'high', '-level:v', '3.1', '-pix_fmt', 'yuv420p',
      '-b:v', `${r.videoKbps}k`, '-maxrate', `${r.videoKbps * 2}k`, '-bufsize', `${r.videoKbps * 2}k`,
      '-g', String(segmentS * fps), '-keyint_min', String(segmentS * fps), '-sc_threshold', '0', '-force_key_frames', `expr:gte(t,n_forced*${segmentS})`,
      '-c:a', 'aac', '-b:a', '64k', '-ac', '2',
      ...H264_IN_BAND_PARAMETER_SETS, ...FMP4_SEGMENT_OPTIONS,
      '-f', 'hls', '-hls_time', String(segmentS), '-hls_playlist_type', 'vod', '-hls_segment_type', 'fmp4',
      '-hls_fmp4_init_filename', 'init.mp4', '-hls_segment_filename', join(dir, r.name, 'seg_%05d.m4s'),
      join(dir, r.name, 'playlist.m3u8'),
    ]);
    renditions.push(await describeRendition(dir, { name: r.name, width: r.width, height: r.height, codecs: CODECS }));
  }
  const manifest = packagedManifestOf(renditions, segmentS);
  await writeManifest(dir, manifest);
  return manifest;
}
