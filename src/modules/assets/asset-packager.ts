import { join } from 'node:path';
import { systemClock, type Clock } from '../../platform/clock.js';
import { mediaMemoryLimitBytesOf, type Config } from '../../platform/config.js';
import { confinedInput, countStreams, probeFile, scanVideoPackets, type ProbeFailure } from '../../platform/media/ffprobe.js';
import { FfmpegProgressParser, percentOf } from '../../platform/media/ffmpeg-progress.js';
import { failureLine, reachedMemoryLimit, runMediaProcess, type MediaProcessResult } from '../../platform/media/media-process.js';
import type { MediaToolPaths } from '../../platform/media/media-tools.js';
import { processCpuReadable, processCpuSeconds } from '../../platform/media/process-cpu.js';
import { writeProcessMarker } from '../../platform/media/process-marker.js';
import { POSTER_FILE, writeManifest } from '../../platform/media/packaged-manifest.js';
import { buildManifest, type ProgressiveOutput } from './packaging-output.js';
import { PlayableSegments } from './playable-segments.js';
import { SEGMENT_S, describeSource, packagingArgs, planRenditions, posterArgs, tooManyStreams, videoStreamOf, type SourceBudgets } from './packaging-plan.js';
import { PackagingWatch, type CpuReader } from './packaging-watch.js';

/** One packaging run of one asset. */
export interface PackagingJob {
  assetId: string;
  /** The uploaded file. */
  source: string;
  /** An empty directory for this attempt's output (the asset's directory once published). */
  workDir: string;
  /** Where to record the pid of each media process (for clean-up after a crash). */
  markerFile: string;
  signal: AbortSignal;
  /** Whole percent done, 0-99 while running (the runner reports 100 once ready). */
  onProgress(percent: number): void;
  /**
   * Called while the encoding runs, each time every rendition has more segments: what can be
   * played already (progressive playback). Never called once `package` has returned.
   */
  onPlayable?(output: ProgressiveOutput): void;
}

/** `packaged`: the work directory holds the asset, manifest.json included (the runner reads it back before the asset is ready). */
export type PackagingOutcome =
  | { kind: 'packaged' }
  | { kind: 'failed'; reason: string }
  | { kind: 'aborted' };

/** Probes and packages an upload (the port the runner drives; tests give it fakes). */
export interface AssetPackager {
  package(job: PackagingJob): Promise<PackagingOutcome>;
}

/** What one packaging may take: the source budgets, then those of the run itself. */
export interface PackagingLimits extends SourceBudgets {
  /** Bytes one job may write (PLAYLINE_PACKAGING_MAX_OUTPUT_BYTES). */
  maxOutputBytes: number;
  /**
   * CPU-time budget of the run's media processes (every thread counted): the larger of
   * `minTimeMs` and `timeFactor` CPU seconds per second of output at 30 fps (a higher output rate
   * counts in proportion: the work is the output's duration x frame rate).
   */
  timeFactor: number;
  minTimeMs: number;
  /** RLIMIT_AS of each ffprobe and ffmpeg (0: none). */
  memoryLimitBytes: number;
}

/** The limits the settings give. */
export function packagingLimitsOf(config: Config): PackagingLimits {
  return {
    maxDurationS: config.packagingMaxDurationS,
    maxFrames: config.packagingMaxFrames,
    maxStreams: config.mediaMaxStreams,
    maxGapS: config.packagingMaxGapS,
    maxOutputBytes: config.packagingMaxOutputBytes,
    timeFactor: config.packagingTimeFactor,
    minTimeMs: config.packagingMinTimeS * 1000,
    memoryLimitBytes: mediaMemoryLimitBytesOf(config),
  };
}

export interface FfmpegPackagerOptions {
  tools: MediaToolPaths;
  /** Rung heights, highest first (PLAYLINE_PACKAGING_LADDER). */
  ladder: number[];
  /** x264 preset (PLAYLINE_PACKAGING_PRESET). */
  preset: string;
  limits: PackagingLimits;
  /** Times the budget and output checks. Default: the system clock. */
  clock?: Clock;
  /** Reads the CPU time of a running media process. Default: `/proc/<pid>/stat` (none where there is no `/proc`: the budget then counts wall-clock time). */
  readCpu?: CpuReader | null;
}

/** The CPU-time budget of packaging `source` (see PackagingLimits.timeFactor). */
export function cpuBudgetMsOf(limits: Pick<PackagingLimits, 'timeFactor' | 'minTimeMs'>, source: { durationS: number; fpsValue: number }): number {
  const work = source.durationS * Math.max(1, source.fpsValue / 30);
  return Math.max(limits.minTimeMs, Math.ceil(limits.timeFactor * work * 1000));
}

/** Share of the progress bar that the encoding takes; the poster and manifest take the rest. */
const ENCODE_SHARE = 0.95;

/**
 * Packages with the system's ffmpeg: probe (ffprobe JSON), a scan of the video's packet times (ffprobe, no decoding), one ffmpeg run for the whole ladder
 * (whose segments are announced to `onPlayable` as every rendition gets them),
 * a poster frame, then manifest.json written last. Failure reasons name the problem in the
 * user's terms and never a server path.
 */
export class FfmpegPackager implements AssetPackager {
  constructor(private readonly options: FfmpegPackagerOptions) {}

  async package(job: PackagingJob): Promise<PackagingOutcome> {
    const { ffmpeg, ffprobe } = this.options.tools;
    const hide = (text: string) => text.replaceAll(`file:${job.source}`, 'the upload').replaceAll(job.source, 'the upload').replaceAll(job.workDir, '<output>');
    // Without a marker, a process left by a killed server is found by its work directory alone: not fatal.
    const record = (pid: number) => {
      try {
        writeProcessMarker(job.markerFile, pid, job.workDir);
      } catch {
        // left to the next attempt's clean-up of the work directory
      }
    };

    const { limits } = this.options;
    const probing = { signal: job.signal, memoryLimitBytes: limits.memoryLimitBytes };
    const unreadable = (probe: ProbeFailure): PackagingOutcome => {
      if (probe.aborted) return { kind: 'aborted' };
      if (probe.reachedMemoryLimit) return { kind: 'failed', reason: this.overMemory('Reading the file') };
      return { kind: 'failed', reason: `Not a media file that can be read (${hide(probe.reason)})` };
    };
    // The streams are counted from the header before any probe decodes a frame of each.
    const counted = await countStreams(ffprobe, job.source, probing);
    if (!counted.ok) return unreadable(counted);
    if (counted.streams > limits.maxStreams) return { kind: 'failed', reason: tooManyStreams(counted.streams, limits.maxStreams) };
    const probe = await probeFile(ffprobe, job.source, probing);
    if (!probe.ok) return unreadable(probe);
    // The video's packets are read (demuxed, not decoded) for its real frame count and its longest
    // time without a frame: a timestamp gap is refused here, before the fps filter would fill it.
    // Reading stops once past the frame budget. Without a video stream there is nothing to read.
    let timeline;
    if (videoStreamOf(probe.media)) {
      const start = Number(probe.media.format.start_time);
      const scan = await scanVideoPackets(ffprobe, job.source, { ...probing, maxPackets: limits.maxFrames, originS: Number.isFinite(start) ? start : undefined });
      if (!scan.ok) return unreadable(scan);
      timeline = scan.timeline;
    }
    const described = describeSource(probe.media, limits, timeline);
    if (!described.ok) return { kind: 'failed', reason: described.reason };
    const source = described.source;
    const plan = planRenditions(this.options.ladder, source);
    const input = confinedInput(job.source);

    const readCpu = this.options.readCpu === undefined ? (processCpuReadable ? processCpuSeconds : undefined) : (this.options.readCpu ?? undefined);
    const watch = new PackagingWatch({
      clock: this.options.clock ?? systemClock,
      jobSignal: job.signal,
      cpuBudgetMs: cpuBudgetMsOf(limits, source),
      readCpu,
      workDir: job.workDir,
      maxOutputBytes: limits.maxOutputBytes,
    });
    const onSpawn = (pid: number) => {
      watch.track(pid);
      record(pid);
    };
    const run = { signal: watch.signal, killGraceMs: 0, onSpawn, memoryLimitBytes: limits.memoryLimitBytes };
    // A budget exceeded ends the run failed (never retried); the job's own abort ends it aborted.
    const ended = async (result: MediaProcessResult, what: string, failed: string): Promise<PackagingOutcome | undefined> => {
      await watch.checkOutput();
      if (watch.exceeded !== undefined) return { kind: 'failed', reason: watch.exceeded };
      if (result.aborted) return { kind: 'aborted' };
      if (reachedMemoryLimit(result, limits.memoryLimitBytes)) return { kind: 'failed', reason: this.overMemory(what) };
      if (result.exitCode !== 0) return { kind: 'failed', reason: `${failed}: ${hide(failureLine(result))}` };
      return undefined;
    };
    const onPlayable = job.onPlayable;
    const playable = onPlayable && new PlayableSegments({ workDir: job.workDir, plan, segmentS: SEGMENT_S, expectedS: source.durationS, onPlayable });
    try {
      let reported = -1;
      const progress = new FfmpegProgressParser(({ outTimeUs }) => {
        playable?.outputReached(outTimeUs / 1e6);
        const percent = Math.min(99, Math.floor(percentOf(outTimeUs, source.durationS) * ENCODE_SHARE));
        if (percent > reported) {
          reported = percent;
          job.onProgress(percent);
        }
      });
      let encoded: MediaProcessResult;
      try {
        encoded = await runMediaProcess(ffmpeg, packagingArgs(plan, source, { source: job.source, workDir: job.workDir }, this.options.preset, input), {
          ...run,
          onStdoutLine: (line) => progress.line(line),
        });
      } finally {
        await playable?.settled();
      }
      const encodeEnd = await ended(encoded, 'Packaging', 'Packaging failed (the file may be corrupt)');
      if (encodeEnd) return encodeEnd;

      const top = plan[0];
      if (!top) return { kind: 'failed', reason: 'No rendition to package' };
      const poster = await runMediaProcess(ffmpeg, posterArgs(top, source, join(job.workDir, POSTER_FILE), input), run);
      const posterEnd = await ended(poster, 'Taking a poster frame', 'Could not take a poster frame');
      if (posterEnd) return posterEnd;
    } finally {
      watch.stop();
    }

    try {
      await writeManifest(job.workDir, await buildManifest(job.workDir, plan, SEGMENT_S));
    } catch (err) {
      return { kind: 'failed', reason: `Packaging produced an incomplete output: ${hide((err as Error).message)}` };
    }
    return { kind: 'packaged' };
  }

  private overMemory(what: string): string {
    const mib = Math.round(this.options.limits.memoryLimitBytes / 1048576);
    return `${what} needed more than the ${mib} MiB of memory a media process may use on this server (too many or too large streams)`;
  }
}
