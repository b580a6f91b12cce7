import { failureLine, runMediaProcess } from './media-process.js';

/** ffmpeg and ffprobe as found at start-up. */
export interface MediaToolPaths {
  ffmpeg: string;
  ffprobe: string;
}

export type MediaTools =
  | ({ available: true; ffmpegVersion: string; ffprobeVersion: string } & MediaToolPaths)
  | { available: false; reason: string };

/** What an operator does about missing tools (in logs and in the 503 answer). */
export const MEDIA_TOOLS_HINT =
  'Install them (Debian/Ubuntu: apt-get install ffmpeg) or point PLAYLINE_FFMPEG_PATH and PLAYLINE_FFPROBE_PATH at them, then restart';

/** The first line of `<tool> -version`, e.g. `ffmpeg version 5.1.6-0+deb12u1 ...`, shortened to the version. */
const versionOf = (firstLine: string): string => /version\s+(\S+)/.exec(firstLine)?.[1] ?? firstLine.trim();

async function probeTool(command: string, name: string): Promise<{ version: string } | { problem: string }> {
  const result = await runMediaProcess(command, ['-hide_banner', '-version'], { collectStdout: true, killGraceMs: 0, signal: AbortSignal.timeout(10_000) });
  if (result.exitCode === 0) return { version: versionOf(result.stdout.split('\n')[0] ?? '') };
  if (result.spawnError && 'code' in result.spawnError && result.spawnError.code === 'ENOENT') return { problem: `${name} not found (${command})` };
  return { problem: `${name} (${command}) does not run: ${failureLine(result)}` };
}

/**
 * Looks for ffmpeg and ffprobe (names are looked up in PATH) by running `-version` on both.
 * Never throws: a missing or broken tool makes the media library unavailable, nothing else.
 */
export async function discoverMediaTools(paths: MediaToolPaths): Promise<MediaTools> {
  const [ffmpeg, ffprobe] = await Promise.all([probeTool(paths.ffmpeg, 'ffmpeg'), probeTool(paths.ffprobe, 'ffprobe')]);
  if ('problem' in ffmpeg || 'problem' in ffprobe) {
    const problems = [ffmpeg, ffprobe].flatMap((t) => ('problem' in t ? [t.problem] : []));
    return { available: false, reason: `${problems.join('; ')}. ${MEDIA_TOOLS_HINT}` };
  }
  return { available: true, ...paths, ffmpegVersion: ffmpeg.version, ffprobeVersion: ffprobe.version };
}
