import type { BackgroundWork } from '../background-work.js';
import { failureLine, prlimitAvailable, runMediaProcess } from './media-process.js';

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

/** ffmpeg and ffprobe as looked for once at start-up, handed to every module that runs them. */
export interface MediaToolsLookup {
  /** What the look found; undefined until it ran (modules start after it). */
  found(): MediaTools | undefined;
  /** The look itself: the first background work of the runtime. */
  work: BackgroundWork;
}

export interface MediaToolsLookupOptions {
  paths: MediaToolPaths;
  /** How to look (tests answer without running anything). Default: run `-version` on both. */
  discover?: (paths: MediaToolPaths) => Promise<MediaTools>;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/**
 * Looks for the media tools once, at start-up, and logs what it found: the asset library,
 * managed slicers and publishing all read the same answer instead of each looking on its own.
 */
export function mediaToolsLookup(options: MediaToolsLookupOptions): MediaToolsLookup {
  let tools: MediaTools | undefined;
  return {
    found: () => tools,
    work: {
      name: 'media tools',
      start: async () => {
        tools = await (options.discover ?? discoverMediaTools)(options.paths);
        if (tools.available) {
          options.log.info({ ffmpeg: tools.ffmpegVersion, ffprobe: tools.ffprobeVersion }, 'media tools found');
          if (!prlimitAvailable()) options.log.warn({}, 'prlimit (util-linux) not found: media processes run without the PLAYLINE_MEDIA_MEMORY_LIMIT_MB limit');
        } else options.log.warn({ reason: tools.reason }, 'media tools missing: media routes answer 503 media_tools_missing, everything else works');
      },
      stop: () => Promise.resolve(),
    },
  };
}
