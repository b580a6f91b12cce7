/** One block of ffmpeg's `-progress` output. */
export interface FfmpegProgress {
  /** Output time written so far, in microseconds. */
  outTimeUs: number;
  /**
   * Bytes written to the first output so far (`total_size`), or undefined while ffmpeg has not
   * reported any (`N/A` before the output is opened).
   */
  totalSize: number | undefined;
  /** True on the last block (`progress=end`). */
  done: boolean;
}

/**
 * Reads ffmpeg's `-progress pipe:1` output line by line (`key=value`, each block ending with
 * `progress=continue` or `progress=end`) and calls `onProgress` once per block.
 *
 * The output time is `out_time_us`, or `out_time_ms` when only that is given: despite its name
 * ffmpeg writes microseconds there too (a long-standing quirk kept for compatibility). Blocks
 * with no time yet (`N/A` before the first frame) report 0. Neither the time nor the size ever
 * goes down: a garbled or late value keeps the last one.
 */
export class FfmpegProgressParser {
  private outTimeUs = 0;
  private totalSize: number | undefined;

  constructor(private readonly onProgress: (progress: FfmpegProgress) => void) {}

  /** Feed one line of the progress output. */
  line(text: string): void {
    const eq = text.indexOf('=');
    if (eq <= 0) return;
    const key = text.slice(0, eq).trim();
    const value = text.slice(eq + 1).trim();
    if (key === 'out_time_us' || key === 'out_time_ms') {
      const us = Number(value);
      if (Number.isFinite(us) && us >= 0) this.outTimeUs = Math.max(this.outTimeUs, us);
      return;
    }
    if (key === 'total_size') {
      const bytes = Number(value);
      if (Number.isFinite(bytes) && bytes >= 0) this.totalSize = Math.max(this.totalSize ?? 0, bytes);
      return;
    }
    if (key === 'progress') this.onProgress({ outTimeUs: this.outTimeUs, totalSize: this.totalSize, done: value === 'end' });
  }
}

/** Whole percent of `durationS` that `outTimeUs` covers, 0 to 100. */
export const percentOf = (outTimeUs: number, durationS: number): number =>
  durationS > 0 ? Math.max(0, Math.min(100, Math.floor(outTimeUs / (durationS * 10_000)))) : 0;
