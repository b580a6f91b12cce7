import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { copyFile, cp, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { FMP4_SEGMENT_OPTIONS, H264_IN_BAND_PARAMETER_SETS } from '../../src/platform/media/fmp4-for-players.js';
import { discoverMediaTools } from '../../src/platform/media/media-tools.js';
import type { PackagedManifest } from '../../src/platform/media/packaged-manifest.js';
import { assetDir } from '../../src/platform/media/media-layout.js';
import { packageWithFfmpeg, type TestPatternOptions } from '../../src/modules/playback-edge/testing/media-fixtures.js';
import { sharedArtifact } from './shared-cache.js';

const run = promisify(execFile);

let toolsProblem: Promise<string | false> | undefined;

/**
 * Why tests that run ffmpeg cannot run here (it is not installed), or false. Like PostgreSQL
 * and Redis: a visible skip on a developer machine, a failure under PLAYLINE_REQUIRE_SERVICES=1 (CI).
 */
export function mediaToolsSkip(): Promise<string | false> {
  toolsProblem ??= discoverMediaTools({ ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' }).then((tools) => {
    if (tools.available) return false;
    if (process.env.PLAYLINE_REQUIRE_SERVICES === '1') throw new Error(`${tools.reason} (PLAYLINE_REQUIRE_SERVICES=1)`);
    console.log(`# SKIP media tests: ${tools.reason}`);
    return tools.reason;
  });
  return toolsProblem;
}

export interface ClipOptions {
  seconds?: number;
  width?: number;
  height?: number;
  /** A tone track (default true). */
  audio?: boolean;
  fps?: number;
  /** Encode with B-frames (x264 veryfast, 3 B-frames forced) instead of ultrafast's none. */
  bframes?: boolean;
}

/**
 * Which ffmpeg a cached encoding came from (its path, size and time on the PATH): a new ffmpeg
 * makes new media rather than reusing what the old one made.
 */
let ffmpegIdentity: string | undefined;
const whichFfmpeg = (): string => {
  if (ffmpegIdentity !== undefined) return ffmpegIdentity;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      const info = statSync(join(dir, 'ffmpeg'));
      if (info.isFile()) return (ffmpegIdentity = `${join(dir, 'ffmpeg')}:${info.size}:${info.mtimeMs}`);
    } catch {
      // not in this directory
    }
  }
  return (ffmpegIdentity = 'ffmpeg');
};

/**
 * `ffmpeg <args> <file>`, run once per machine and set of arguments (test/helpers/shared-cache.ts)
 * and copied to `path`: test files that need the same clip share one encoding, and a second run
 * of the suite encodes nothing. The output's name sets its container, so it is part of the recipe.
 */
export async function encodeOnce(args: string[], path: string): Promise<string> {
  const file = `out${path.slice(path.lastIndexOf('.'))}`;
  const cached = await sharedArtifact('media', JSON.stringify({ ffmpeg: whichFfmpeg(), args, file }), async (dir) => {
    await run('ffmpeg', [...args, join(dir, file)]);
  });
  await copyFile(join(cached, file), path);
  return path;
}

/** Generates a small test clip (test pattern + tone) with ffmpeg (once per recipe: encodeOnce); returns its path. */
export async function makeClip(dir: string, name: string, options: ClipOptions = {}): Promise<string> {
  const { seconds = 3, width = 320, height = 180, audio = true, fps = 25 } = options;
  const args = ['-hide_banner', '-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=${fps}:duration=${seconds}`];
  if (audio) args.push('-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`);
  // B-frames on demand: packets then come in decode order, their presentation times out of order.
  if (options.bframes) args.push('-c:v', 'libx264', '-preset', 'veryfast', '-x264-params', 'bframes=3:b-adapt=0', '-pix_fmt', 'yuv420p');
  else args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p');
  if (audio) args.push('-c:a', 'aac');
  return encodeOnce(args, join(dir, name));
}

/**
 * A slideshow: one picture every `everyS` seconds (a frame rate of 1/everyS) for `seconds`, with a
 * tone for the whole length: legitimate content whose frames are far apart.
 */
export async function makeSlideshow(dir: string, name: string, options: { seconds?: number; everyS?: number } = {}): Promise<string> {
  const { seconds = 30, everyS = 10 } = options;
  return encodeOnce([
    '-hide_banner', '-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=160x90:rate=1/${everyS}:duration=${seconds}`,
    '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
    '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-c:a', 'aac',
  ], join(dir, name));
}

/** Generates a tone-only file (no video stream). */
export async function makeAudioOnly(dir: string, name: string): Promise<string> {
  return encodeOnce(['-hide_banner', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=1', '-c:a', 'aac'], join(dir, name));
}

/**
 * A packaged test pattern (media-fixtures' `packageWithFfmpeg`) placed as asset `assetId` of
 * `owner` under the media root `root`: packaged once per machine and options, then copied, the
 * manifest last (renamed into place, as the library writes it).
 */
export async function packagedTestPattern(root: string, owner: string, assetId: string, options: Omit<TestPatternOptions, 'ffmpeg'> = {}): Promise<PackagedManifest> {
  // The packaging arguments are part of the recipe: a change to them makes new media.
  const recipe = [...H264_IN_BAND_PARAMETER_SETS, ...FMP4_SEGMENT_OPTIONS];
  const cached = await sharedArtifact('packaged', JSON.stringify({ ffmpeg: whichFfmpeg(), options, recipe }), async (dir) => {
    await packageWithFfmpeg(dir, 'owner', 'asset', options);
  });
  const from = assetDir(cached, 'owner', 'asset');
  const to = assetDir(root, owner, assetId);
  await mkdir(to, { recursive: true });
  await cp(from, to, { recursive: true, filter: (source) => source !== join(from, 'manifest.json') });
  const temp = join(to, `.manifest.json.${process.pid}.tmp`);
  await copyFile(join(from, 'manifest.json'), temp);
  await rename(temp, join(to, 'manifest.json'));
  return JSON.parse(await readFile(join(to, 'manifest.json'), 'utf8')) as PackagedManifest;
}

/** The codec names ffprobe reads in a segment played after its init segment (as a player does). */
export async function codecsOfSegment(init: string, segment: string, scratch: string): Promise<string[]> {
  const joined = join(scratch, `probe-${Date.now()}-${Math.random().toString(16).slice(2)}.mp4`);
  await writeFile(joined, Buffer.concat([await readFile(init), await readFile(segment)]));
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', joined]);
  return stdout.split('\n').map((l) => l.trim()).filter(Boolean).sort();
}

/** Keyframe times (seconds) of a segment played after its init segment. */
export async function keyframeTimes(init: string, segment: string, scratch: string): Promise<number[]> {
  const joined = join(scratch, `kf-${Date.now()}-${Math.random().toString(16).slice(2)}.mp4`);
  await writeFile(joined, Buffer.concat([await readFile(init), await readFile(segment)]));
  const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-skip_frame', 'nokey', '-show_entries', 'frame=pts_time', '-of', 'csv=p=0', joined]);
  return stdout.split('\n').map((l) => Number.parseFloat(l)).filter((n) => Number.isFinite(n));
}

/** One track of a media segment's first fragment, as stored (tfdt, trun): what players that ignore the edit list read. */
export interface FragmentTrackTiming {
  trackId: number;
  /** tfdt: the first sample's decode time, in the track's timescale. */
  baseDecodeTime: number;
  /** The earliest presentation time of the fragment's samples (decode time + composition offset), same timescale. */
  firstPresentation: number;
}

/**
 * Reads a fragment's moof without any demuxer in between (ffmpeg's MP4 reader shifts negative
 * composition offsets even with -ignore_editlist): each traf's tfdt and its trun's sample durations
 * and composition offsets (signed in trun version 1). Default durations from tfhd only.
 */
export function fragmentTiming(segment: Buffer): FragmentTrackTiming[] {
  const boxes = (data: Buffer): Array<{ type: string; body: Buffer }> => {
    const found = [];
    for (let at = 0; at + 8 <= data.length;) {
      const size = data.readUInt32BE(at);
      if (size < 8) break;
      found.push({ type: data.toString('latin1', at + 4, at + 8), body: data.subarray(at + 8, at + size) });
      at += size;
    }
    return found;
  };
  const moof = boxes(segment).find((b) => b.type === 'moof');
  if (!moof) throw new Error('no moof in the segment');
  return boxes(moof.body).filter((b) => b.type === 'traf').map(({ body }) => {
    const traf = boxes(body);
    const tfhd = traf.find((b) => b.type === 'tfhd')?.body as Buffer;
    const tfdt = traf.find((b) => b.type === 'tfdt')?.body as Buffer;
    const tfhdFlags = tfhd.readUIntBE(1, 3);
    const defaultDuration = tfhdFlags & 0x08 ? tfhd.readUInt32BE(8 + (tfhdFlags & 0x01 ? 8 : 0) + (tfhdFlags & 0x02 ? 4 : 0)) : 0;
    const baseDecodeTime = tfdt[0] === 1 ? Number(tfdt.readBigUInt64BE(4)) : tfdt.readUInt32BE(4);
    let decode = baseDecodeTime;
    let firstPresentation = Number.POSITIVE_INFINITY;
    for (const { body: trun } of traf.filter((b) => b.type === 'trun')) {
      const version = trun[0];
      const flags = trun.readUIntBE(1, 3);
      const count = trun.readUInt32BE(4);
      let p = 8 + (flags & 0x01 ? 4 : 0) + (flags & 0x04 ? 4 : 0);
      for (let i = 0; i < count; i++) {
        const duration = flags & 0x100 ? trun.readUInt32BE(p) : defaultDuration;
        p += (flags & 0x100 ? 4 : 0) + (flags & 0x200 ? 4 : 0) + (flags & 0x400 ? 4 : 0);
        const offset = flags & 0x800 ? (version === 1 ? trun.readInt32BE(p) : trun.readUInt32BE(p)) : 0;
        p += flags & 0x800 ? 4 : 0;
        firstPresentation = Math.min(firstPresentation, decode + offset);
        decode += duration;
      }
    }
    return { trackId: tfhd.readUInt32BE(4), baseDecodeTime, firstPresentation };
  });
}

/**
 * The timestamp-gap file of finding N7: `fps` frames (one second) of a tiny test pattern, then one
 * more frame at `gapS` seconds, in Matroska. A few KB that declare a duration of `gapS`: packaged
 * at a constant frame rate, the gap would be filled with `gapS` x `fps` repeated frames. The
 * recipe's result is checked (the bitstream filter's time base is the muxer's, milliseconds).
 */
export async function makeGapFile(dir: string, name: string, options: { gapS?: number; fps?: number } = {}): Promise<string> {
  const { gapS = 7200, fps = 60 } = options;
  const path = await encodeOnce([
    '-hide_banner', '-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=160x90:rate=${fps}:duration=1`,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-bf', '0',
    '-bsf:v', `setts=ts=if(eq(N\\,${fps - 1})\\,${gapS * 1000}\\,TS)`,
  ], join(dir, name));
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path]);
  const declared = Number.parseFloat(stdout);
  if (!(Math.abs(declared - gapS) < 1)) throw new Error(`the gap file declares ${stdout.trim()} s, not ${gapS} s: the recipe does not fit this ffmpeg`);
  return path;
}

/** A Matroska file of `streams` video streams, each one tiny frame (finding N8's stream-count bomb, small). */
export async function makeManyStreams(dir: string, name: string, streams: number): Promise<string> {
  const args = ['-hide_banner', '-v', 'error', '-y'];
  for (let i = 0; i < streams; i++) args.push('-f', 'lavfi', '-i', 'testsrc=size=64x36:rate=1:duration=1');
  for (let i = 0; i < streams; i++) args.push('-map', `${i}:v`);
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p');
  return encodeOnce(args, join(dir, name));
}

/**
 * The H.264 NAL unit types (7 SPS, 8 PPS, 5 IDR slice...) of a segment's first video sample, read
 * after its init segment: whether its keyframe carries its own parameter sets.
 */
export async function firstVideoNalTypes(init: string, segment: string, scratch: string): Promise<number[]> {
  const joined = join(scratch, `nal-${Date.now()}-${Math.random().toString(16).slice(2)}.mp4`);
  await writeFile(joined, Buffer.concat([await readFile(init), await readFile(segment)]));
  const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_packets', '-show_data', '-read_intervals', '%+#1', '-of', 'json', joined]);
  const data = (JSON.parse(stdout) as { packets: Array<{ data?: string }> }).packets[0]?.data ?? '';
  const sample = Buffer.from(data.split('\n').map((line) => line.slice(10, 50).replaceAll(' ', '')).join(''), 'hex');
  const types: number[] = [];
  // Each NAL unit after its 4-byte length.
  for (let at = 0; at + 4 < sample.length; at += 4 + sample.readUInt32BE(at)) types.push((sample[at + 4] ?? 0) & 0x1f);
  return types;
}
