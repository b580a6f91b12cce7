import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * An ffmpeg for tests of what happens while a packaging runs (progressive playback): a script
 * that runs the system's ffmpeg unchanged, except that an HLS packaging reads its input at
 * `readrate` times real time (ffmpeg's own `-readrate`), so a short clip stays "being packaged"
 * for a known share of its duration whatever the machine's speed. Give its path as
 * PLAYLINE_FFMPEG_PATH or the packager's `tools.ffmpeg`.
 */
export async function pacedFfmpeg(dir: string, readrate: number, ffmpeg = 'ffmpeg'): Promise<string> {
  if (!(readrate > 0)) throw new Error('readrate must be positive');
  const path = join(dir, `ffmpeg-paced-${readrate}.sh`);
  const script = [
    '#!/bin/sh',
    '# Paced only when writing HLS (the packaging run); probes, posters and version checks run as is.',
    'case " $* " in',
    `  *" -f hls "*) exec ${JSON.stringify(ffmpeg)} -readrate ${readrate} "$@" ;;`,
    `  *) exec ${JSON.stringify(ffmpeg)} "$@" ;;`,
    'esac',
    '',
  ].join('\n');
  await writeFile(path, script);
  await chmod(path, 0o755);
  return path;
}
