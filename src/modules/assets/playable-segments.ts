import { progressiveOutputOf, type ProgressiveOutput } from './packaging-output.js';
import type { RenditionPlan } from './packaging-plan.js';

export interface PlayableSegmentsOptions {
  workDir: string;
  plan: readonly RenditionPlan[];
  segmentS: number;
  /** The source's duration: what the asset will last once packaged. */
  expectedS: number;
  /** Called with each look that found more segments in every rendition (never twice at once, never after `settled`). */
  onPlayable(output: ProgressiveOutput): void;
  onError?(error: unknown): void;
}

/**
 * Follows a running packaging's output: each time ffmpeg's output time passes the end of the
 * next segment, the rendition playlists are read again (one look at a time; a look that finds
 * nothing new is made again at the next progress report). Costs a few small reads per segment
 * (a segment's size is read once), never a second encode.
 */
export class PlayableSegments {
  private announced = 0;
  private looking: Promise<void> | undefined;
  private ended = false;
  private readonly sizes = new Map<string, number>();

  constructor(private readonly options: PlayableSegmentsOptions) {}

  /** Segments per rendition announced so far. */
  get count(): number {
    return this.announced;
  }

  /**
   * ffmpeg reports `outS` seconds of output written. A look waits for the next segment while fewer
   * than 200 are announced, then for 0.5 % more (each look rewrites progressive.json whole, so a
   * many-hour asset is not rewritten thousands of times; its players are far behind the edge).
   */
  outputReached(outS: number): void {
    const step = Math.max(1, Math.floor(this.announced / 200));
    if (this.ended || this.looking || outS < (this.announced + step) * this.options.segmentS) return;
    this.looking = this.look().finally(() => {
      this.looking = undefined;
    });
  }

  /** No look starts from now on; resolves once a look under way is over (its `onPlayable` called). */
  async settled(): Promise<void> {
    this.ended = true;
    await this.looking;
  }

  private async look(): Promise<void> {
    const { workDir, plan, segmentS, expectedS } = this.options;
    let output: ProgressiveOutput | undefined;
    try {
      output = await progressiveOutputOf(workDir, plan, segmentS, expectedS, this.sizes);
    } catch (error) {
      // A file between ffmpeg's writes: read again at the next report.
      this.options.onError?.(error);
      return;
    }
    const count = output?.manifest.renditions[0]?.segments.length ?? 0;
    if (!output || count <= this.announced) return;
    this.announced = count;
    this.options.onPlayable(output);
  }
}
