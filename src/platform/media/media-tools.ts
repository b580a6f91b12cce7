import type { BackgroundWork } from '../background-work.js';
import type { Clock } from '../clock.js';
import { failureLine, prlimitAvailable, runMediaProcess, type ProcessRunner } from './media-process.js';

/** ffmpeg and ffprobe as found at start-up. */
export interface MediaToolPaths {
  ffmpeg: string;
  ffprobe: string;
}

/**
 * What this ffmpeg build can do, of what Playline uses (datarhei's ffmpeg "skills" are the model):
 * ingest and push protocols, output formats, the H.264 encoder. A build without librist has no
 * `rist`: RIST slicers cannot run there, and the rest still can.
 */
export const MEDIA_CAPABILITIES = {
  protocols: ['srt', 'rist', 'rtmp'],
  formats: ['hls', 'mp4'],
  encoders: ['libx264', 'aac'],
} as const;
export type MediaCapability = (typeof MEDIA_CAPABILITIES)[keyof typeof MEDIA_CAPABILITIES][number];

export type MediaTools =
  | ({
      available: true;
      ffmpegVersion: string;
      ffprobeVersion: string;
      /** The capabilities of MEDIA_CAPABILITIES this ffmpeg lacks (empty: all there); undefined until probed. */
      missing?: readonly MediaCapability[] | undefined;
    } & MediaToolPaths)
  | { available: false; reason: string };

/** What an operator does about missing tools (in logs and in the 503 answer). */
export const MEDIA_TOOLS_HINT =
  'Install them (Debian/Ubuntu: apt-get install ffmpeg) or point PLAYLINE_FFMPEG_PATH and PLAYLINE_FFPROBE_PATH at them, then restart';

/**
 * How long one probe process may run before it is stopped: a guard against a tool that hangs,
 * not a verdict on the tools. A probe stopped by it counts as a failed look, and the lookup looks
 * again in the background; it never decides "no ffmpeg" for the life of the process.
 */
const PROBE_BOUND_MS = 120_000;

/** The default runner of the probes: the tool, its stdout collected, bounded by PROBE_BOUND_MS. */
const probeRunner: ProcessRunner = (command, args, options) => runMediaProcess(command, args, { ...options, signal: AbortSignal.timeout(PROBE_BOUND_MS) });

/** The first line of `<tool> -version`, e.g. `ffmpeg version 5.1.6-0+deb12u1 ...`, shortened to the version. */
const versionOf = (firstLine: string): string => /version\s+(\S+)/.exec(firstLine)?.[1] ?? firstLine.trim();

async function probeTool(run: ProcessRunner, command: string, name: string): Promise<{ version: string } | { problem: string }> {
  const result = await run(command, ['-hide_banner', '-version'], { collectStdout: true, killGraceMs: 0 });
  if (result.exitCode === 0) return { version: versionOf(result.stdout.split('\n')[0] ?? '') };
  if (result.spawnError && 'code' in result.spawnError && result.spawnError.code === 'ENOENT') return { problem: `${name} not found (${command})` };
  if (result.aborted) return { problem: `${name} (${command}) did not answer -version within ${PROBE_BOUND_MS / 1000} s (looked for again in the background)` };
  return { problem: `${name} (${command}) does not run: ${failureLine(result)}` };
}

/**
 * The names a listing of `ffmpeg -protocols`, `-formats` or `-encoders` holds: a protocol is a
 * line of its own; a format or encoder line is flags, the name(s), then a description.
 */
function listedNames(listing: string, kind: keyof typeof MEDIA_CAPABILITIES): Set<string> {
  const names = new Set<string>();
  for (const line of listing.split('\n')) {
    const trimmed = line.trim();
    if (kind === 'protocols') {
      if (/^[a-z0-9_]+$/.test(trimmed)) names.add(trimmed);
      continue;
    }
    const match = /^[A-Z.]{1,6}\s+(\S+)\s/.exec(trimmed);
    for (const name of match?.[1]?.split(',') ?? []) names.add(name);
  }
  return names;
}

/** The capabilities of MEDIA_CAPABILITIES that `ffmpeg` lacks, or undefined when a listing could not be read. */
async function missingCapabilities(run: ProcessRunner, ffmpeg: string): Promise<MediaCapability[] | undefined> {
  const kinds = Object.keys(MEDIA_CAPABILITIES) as Array<keyof typeof MEDIA_CAPABILITIES>;
  const listings = await Promise.all(kinds.map((kind) => run(ffmpeg, ['-hide_banner', `-${kind}`], { collectStdout: true, killGraceMs: 0 })));
  if (listings.some((result) => result.exitCode !== 0)) return undefined;
  return kinds.flatMap((kind, i) => {
    const names = listedNames(listings[i]?.stdout ?? '', kind);
    return MEDIA_CAPABILITIES[kind].filter((name) => !names.has(name));
  });
}

/**
 * Looks for ffmpeg and ffprobe (names are looked up in PATH) by running `-version` on both, then
 * reads what this ffmpeg can do (`-protocols`, `-formats`, `-encoders`). Never throws: a missing
 * or broken tool makes the media library unavailable, nothing else.
 */
export async function discoverMediaTools(paths: MediaToolPaths, run: ProcessRunner = probeRunner): Promise<MediaTools> {
  const [ffmpeg, ffprobe] = await Promise.all([probeTool(run, paths.ffmpeg, 'ffmpeg'), probeTool(run, paths.ffprobe, 'ffprobe')]);
  if ('problem' in ffmpeg || 'problem' in ffprobe) {
    const problems = [ffmpeg, ffprobe].flatMap((t) => ('problem' in t ? [t.problem] : []));
    return { available: false, reason: `${problems.join('; ')}. ${MEDIA_TOOLS_HINT}` };
  }
  const missing = await missingCapabilities(run, paths.ffmpeg);
  return { available: true, ...paths, ffmpegVersion: ffmpeg.version, ffprobeVersion: ffprobe.version, missing };
}

/** ffmpeg and ffprobe as looked for at start-up (and again until found), handed to every module that runs them. */
export interface MediaToolsLookup {
  /** What the latest look found; undefined until the first one ran (modules start after it). */
  found(): MediaTools | undefined;
  /** Calls `listener` once the tools are found by a later look (the first look's answer is `found()`). */
  onFound(listener: (tools: MediaTools & { available: true }) => void): void;
  /** The first look, then the looks again in the background while the tools are not found; stopped with the runtime. */
  work: BackgroundWork;
}

export interface MediaToolsLookupOptions {
  paths: MediaToolPaths;
  /** How to look (tests answer without running anything). Default: discoverMediaTools. */
  discover?: (paths: MediaToolPaths) => Promise<MediaTools>;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** The runtime clock: the looks again are timers on it. */
  clock: Clock;
  /** The first wait before looking again; it doubles up to `maxRetryMs`. Default 5 s and 5 min. */
  retryMs?: number;
  maxRetryMs?: number;
}

/**
 * Looks for the media tools at start-up and logs what it found: the asset library, managed
 * slicers and publishing all read the same answer instead of each looking on its own. A look that
 * fails (tools missing, or too slow on a loaded machine) is repeated in the background with a
 * growing wait, so a slow start never turns media off until a restart; `onFound` tells the modules.
 */
export function mediaToolsLookup(options: MediaToolsLookupOptions): MediaToolsLookup {
  const discover = options.discover ?? discoverMediaTools;
  const retryMs = options.retryMs ?? 5_000;
  const maxRetryMs = options.maxRetryMs ?? 300_000;
  const listeners: Array<(tools: MediaTools & { available: true }) => void> = [];
  let tools: MediaTools | undefined;
  let cancel: (() => void) | undefined;
  let stopped = false;

  const look = async (): Promise<MediaTools> => {
    const answer = await discover(options.paths);
    if (answer.available) {
      options.log.info({ ffmpeg: answer.ffmpegVersion, ffprobe: answer.ffprobeVersion, missing: answer.missing ?? 'not probed' }, 'media tools found');
      if (answer.missing && answer.missing.length > 0) options.log.warn({ missing: answer.missing }, `this ffmpeg lacks ${answer.missing.join(', ')}: what needs it fails, everything else works`);
      if (!prlimitAvailable()) options.log.warn({}, 'prlimit (util-linux) not found: media processes run without the PLAYLINE_MEDIA_MEMORY_LIMIT_MB limit');
    }
    return answer;
  };
  const again = (waitMs: number): void => {
    if (stopped) return;
    cancel = options.clock.setTimer(() => {
      cancel = undefined;
      void look().then((answer) => {
        if (stopped) return;
        if (!answer.available) return again(Math.min(waitMs * 2, maxRetryMs));
        tools = answer;
        for (const listener of listeners) listener(answer);
      }, () => again(Math.min(waitMs * 2, maxRetryMs)));
    }, waitMs);
  };

  return {
    found: () => tools,
    onFound: (listener) => void listeners.push(listener),
    work: {
      name: 'media tools',
      start: async () => {
        stopped = false;
        tools = await look();
        if (!tools.available) {
          options.log.warn({ reason: tools.reason, retryMs }, 'media tools missing: media routes answer 503 media_tools_missing, everything else works; looking again in the background');
          again(retryMs);
        }
      },
      stop: () => {
        stopped = true;
        cancel?.();
        return Promise.resolve();
      },
    },
  };
}
