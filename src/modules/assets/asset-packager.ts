import { join } from 'node:path';
import { confinedInput, probeFile } from '../../platform/media/ffprobe.js';
import { FfmpegProgressParser, percentOf } from '../../platform/media/ffmpeg-progress.js';
import { failureLine, runMediaProcess } from '../../platform/media/media-process.js';
import type { MediaToolPaths } from '../../platform/media/media-tools.js';
import { writeProcessMarker } from '../../platform/media/process-marker.js';
import { POSTER_FILE, writeManifest } from '../../platform/media/packaged-manifest.js';
import { buildManifest } from './packaging-output.js';
import { SEGMENT_S, describeSource, packagingArgs, planRenditions, posterArgs } from './packaging-plan.js';

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

export interface FfmpegPackagerOptions {
  tools: MediaToolPaths;
  /** Rung heights, highest first (PLAYLINE_PACKAGING_LADDER). */
  ladder: number[];
  /** x264 preset (PLAYLINE_PACKAGING_PRESET). */
  preset: string;
}

/** Share of the progress bar that the encoding takes; the poster and manifest take the rest. */
const ENCODE_SHARE = 0.95;

/**
 * Packages with the system's ffmpeg: probe (ffprobe JSON), one ffmpeg run for the whole ladder,
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

    const probe = await probeFile(ffprobe, job.source, job.signal);
    if (!probe.ok) return probe.aborted ? { kind: 'aborted' } : { kind: 'failed', reason: `Not a media file that can be read (${hide(probe.reason)})` };
    const described = describeSource(probe.media);
    if (!described.ok) return { kind: 'failed', reason: described.reason };
    const source = described.source;
    const plan = planRenditions(this.options.ladder, source);
    const input = confinedInput(job.source);

    let reported = -1;
    const progress = new FfmpegProgressParser(({ outTimeUs }) => {
      const percent = Math.min(99, Math.floor(percentOf(outTimeUs, source.durationS) * ENCODE_SHARE));
      if (percent > reported) {
        reported = percent;
        job.onProgress(percent);
      }
    });
    const encoded = await runMediaProcess(ffmpeg, packagingArgs(plan, source, { source: job.source, workDir: job.workDir }, this.options.preset, input), {
      signal: job.signal,
      killGraceMs: 0,
      onSpawn: record,
      onStdoutLine: (line) => progress.line(line),
    });
    if (encoded.aborted) return { kind: 'aborted' };
    if (encoded.exitCode !== 0) return { kind: 'failed', reason: `Packaging failed (the file may be corrupt): ${hide(failureLine(encoded))}` };

    const top = plan[0];
    if (!top) return { kind: 'failed', reason: 'No rendition to package' };
    const poster = await runMediaProcess(ffmpeg, posterArgs(top, source, join(job.workDir, POSTER_FILE), input), { signal: job.signal, killGraceMs: 0, onSpawn: record });
    if (poster.aborted) return { kind: 'aborted' };
    if (poster.exitCode !== 0) return { kind: 'failed', reason: `Could not take a poster frame: ${hide(failureLine(poster))}` };

    try {
      await writeManifest(job.workDir, await buildManifest(job.workDir, plan, SEGMENT_S));
    } catch (err) {
      return { kind: 'failed', reason: `Packaging produced an incomplete output: ${hide((err as Error).message)}` };
    }
    return { kind: 'packaged' };
  }
}
