import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * RIST senders for the issue-35 attack and its defence, as an outsider and the customer would run
 * them: ffmpeg pushing a flat colour (H.264 in MPEG-TS) to `rist://...`, with or without a secret.
 * A colour identifies the sender in the slicer's live window (`windowColours`).
 */
export interface RistSender {
  child: ChildProcess;
  /** Seconds of media the sender has sent so far (its own `-progress`), to wait on the sender, not on a clock. */
  sentSeconds(): number;
  stop(): Promise<void>;
}

export function startRistSender(url: string, colour: 'red' | 'blue' | 'green'): RistSender {
  const child = spawn('ffmpeg', [
    '-hide_banner', '-nostdin', '-loglevel', 'quiet', '-nostats', '-progress', 'pipe:1', '-re', '-f', 'lavfi', '-i', `color=c=${colour}:size=160x90:rate=25`,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '25', '-f', 'mpegts', url,
  ], { stdio: ['ignore', 'pipe', 'ignore'] });
  let sent = 0;
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    for (const match of text.matchAll(/out_time_us=(\d+)/g)) sent = Math.max(sent, Number(match[1]) / 1e6);
  });
  return {
    child,
    sentSeconds: () => sent,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** The colour of one decoded frame (its mean over the picture): the largest channel, or `other`. */
const colourOf = (r: number, g: number, b: number): string => (r > 150 && g < 90 && b < 90 ? 'red' : b > 150 && r < 90 && g < 90 ? 'blue' : g > 90 && r < 90 && b < 90 ? 'green' : 'other');

/**
 * The colour of every frame in the slicer's live window (init.mp4 + each `seg_main_*.m4s`,
 * decoded and scaled to one pixel), counted by colour.
 */
export function windowColours(liveDir: string): Record<string, number> {
  const files = readdirSync(liveDir);
  const init = files.find((f) => /^init.*\.mp4$/.test(f));
  if (!init) throw new Error(`no init segment in the live window: ${files.join(' ')}`);
  const scratch = mkdtempSync(join(tmpdir(), 'playline-rist-window-'));
  const counts: Record<string, number> = {};
  try {
    for (const segment of files.filter((f) => /^seg_main_\d+\.m4s$/.test(f))) {
      const file = join(scratch, 'one.mp4');
      try {
        writeFileSync(file, Buffer.concat([readFileSync(join(liveDir, init)), readFileSync(join(liveDir, segment))]));
      } catch {
        continue; // deleted as it left the window
      }
      const decoded = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'quiet', '-i', file, '-vf', 'scale=1:1', '-pix_fmt', 'rgb24', '-f', 'rawvideo', 'pipe:1'], { maxBuffer: 1 << 20 });
      const rgb = decoded.stdout;
      for (let i = 0; i + 2 < rgb.length; i += 3) {
        const colour = colourOf(rgb[i] as number, rgb[i + 1] as number, rgb[i + 2] as number);
        counts[colour] = (counts[colour] ?? 0) + 1;
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return counts;
}

/** `url` with its secret replaced by another of the same form (an outsider's guess). */
export const withWrongSecret = (url: string): string => url.replace(/secret=[^&]+/, `secret=${'W'.repeat(32)}`);
/** `url` without its query: a sender with no secret at all. */
export const withoutSecret = (url: string): string => url.split('?')[0] as string;
