import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { discoverMediaTools } from '../../src/platform/media/media-tools.js';

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
}

/** Generates a small test clip (test pattern + tone) with ffmpeg; returns its path. */
export async function makeClip(dir: string, name: string, options: ClipOptions = {}): Promise<string> {
  const { seconds = 3, width = 320, height = 180, audio = true, fps = 25 } = options;
  const path = join(dir, name);
  const args = ['-hide_banner', '-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=${fps}:duration=${seconds}`];
  if (audio) args.push('-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`);
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p');
  if (audio) args.push('-c:a', 'aac');
  args.push(path);
  await run('ffmpeg', args);
  return path;
}

/** Generates a tone-only file (no video stream). */
export async function makeAudioOnly(dir: string, name: string): Promise<string> {
  const path = join(dir, name);
  await run('ffmpeg', ['-hide_banner', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=1', '-c:a', 'aac', path]);
  return path;
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
