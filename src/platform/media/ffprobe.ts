import { failureLine, reachedMemoryLimit, runMediaProcess, type MediaProcessResult } from './media-process.js';
import { PacketTimeline, type PacketTimelineSummary } from './packet-timeline.js';

/**
 * Demuxers a media file may be read with. Playlists and indirections (hls, concat, image
 * sequences, lavfi...) are left out on purpose: a crafted "video" could otherwise make the
 * tools read other local files or reach the network. Audio-only containers are kept, so an
 * audio file is recognised (and refused for lacking video) rather than called "not media".
 */
export const MEDIA_DEMUXERS = [
  'mov', 'mp4', 'm4a', '3gp', '3g2', 'mj2', 'matroska', 'webm', 'avi', 'flv', 'mpegts', 'mpeg', 'mpegvideo',
  'ogg', 'asf', 'mxf', 'dv', 'h264', 'hevc', 'm4v', 'wav', 'mp3', 'aac', 'flac',
].join(',');

/**
 * How much of a file ffprobe and ffmpeg read to learn its streams (ffmpeg's defaults are 5 MB and,
 * for some demuxers, more than 5 s). Probing decodes frames of every stream, so these bound the
 * memory and time a crafted file can take before anything else looks at it; a normal upload's
 * streams are described well within them.
 */
export const PROBE_SIZE_BYTES = 2_000_000;
export const ANALYZE_DURATION_US = 5_000_000;

/** Input options that confine a tool to one local file read by a known media demuxer, with bounded probing. */
export const confinedInput = (path: string): string[] => [
  '-protocol_whitelist', 'file', '-format_whitelist', MEDIA_DEMUXERS,
  '-probesize', String(PROBE_SIZE_BYTES), '-analyzeduration', String(ANALYZE_DURATION_US),
  '-i', `file:${path}`,
];

/** The parts of ffprobe's `-show_format -show_streams` JSON that Playline reads. */
export interface ProbedStream {
  index: number;
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  sample_aspect_ratio?: string;
  field_order?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  duration?: string;
  /** Frames the container declares for the stream (not every container says). */
  nb_frames?: string;
  profile?: string;
  level?: number;
  disposition?: { attached_pic?: number };
  tags?: Record<string, string>;
  side_data_list?: Array<{ side_data_type?: string; rotation?: number }>;
}

export interface ProbedMedia {
  streams: ProbedStream[];
  format: { format_name?: string; duration?: string; size?: string; start_time?: string };
}

/** A probe that did not describe the file: why, whether it was aborted, whether it ran out of its memory limit. */
export interface ProbeFailure {
  ok: false;
  reason: string;
  aborted: boolean;
  reachedMemoryLimit: boolean;
}

export type ProbeOutcome = { ok: true; media: ProbedMedia } | ProbeFailure;

export interface ProbeOptions {
  signal?: AbortSignal | undefined;
  /** RLIMIT_AS of ffprobe (bytes; 0 or undefined: none). */
  memoryLimitBytes?: number | undefined;
}

export type StreamCount = { ok: true; streams: number } | ProbeFailure;

/**
 * Counts a file's streams from its header alone (`-nofind_stream_info`: nothing is decoded), so a
 * file that declares a hundred 4K streams is refused before any probe decodes a frame of each.
 * A container that declares its streams only as they appear (MPEG-TS) counts 0 here; the full
 * probe's answer is checked against the same cap.
 */
export async function countStreams(ffprobe: string, path: string, options: ProbeOptions = {}): Promise<StreamCount> {
  const args = ['-hide_banner', '-v', 'error', '-nofind_stream_info', '-show_entries', 'stream=index', '-of', 'csv=p=0', ...ffprobeInput(path)];
  const result = await runFfprobe(ffprobe, args, options);
  if (result.aborted || result.exitCode !== 0) return probeFailure(result, path, options);
  return { ok: true, streams: result.stdout.split('\n').filter((line) => line.trim() !== '').length };
}

/** Runs ffprobe on one local file, confined to media demuxers. Never throws. */
export async function probeFile(ffprobe: string, path: string, options: ProbeOptions = {}): Promise<ProbeOutcome> {
  const args = ['-hide_banner', '-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', ...ffprobeInput(path)];
  const result = await runFfprobe(ffprobe, args, options);
  if (result.aborted || result.exitCode !== 0) return probeFailure(result, path, options);
  try {
    const parsed = JSON.parse(result.stdout) as Partial<ProbedMedia>;
    return { ok: true, media: { streams: parsed.streams ?? [], format: parsed.format ?? {} } };
  } catch {
    return { ok: false, reason: 'ffprobe gave no readable description of the file', aborted: false, reachedMemoryLimit: false };
  }
}

export interface PacketScanOptions extends ProbeOptions {
  /** Stop reading once more packets than this were read (the answer says `stopped`): a budget already passed needs no exact count. */
  maxPackets?: number | undefined;
  /** Where the file starts (seconds, the format's start time), so a first frame long after it counts as a gap. */
  originS?: number | undefined;
}

export type PacketScan = { ok: true; timeline: PacketTimelineSummary; stopped: boolean } | ProbeFailure;

/**
 * Reads the packets of the first video stream, demuxing only (no frame is decoded), with the same
 * confinement, probe limits and memory limit as the probe: how many there are and the longest
 * time without a frame (packet-timeline.ts). ffprobe's CSV is read line by line as it comes and
 * never kept, so memory stays small whatever the number of packets. A file without a video stream
 * reads as no packets. Never throws.
 */
export async function scanVideoPackets(ffprobe: string, path: string, options: PacketScanOptions = {}): Promise<PacketScan> {
  const args = ['-hide_banner', '-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,dts_time', '-of', 'csv=p=0', ...ffprobeInput(path)];
  const timeline = new PacketTimeline(options.originS);
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  let stopped = false;
  const result = await runMediaProcess(ffprobe, args, {
    signal,
    killGraceMs: 0,
    ...(options.memoryLimitBytes ? { memoryLimitBytes: options.memoryLimitBytes } : {}),
    onStdoutLine: (line) => {
      if (stopped) return;
      timeline.line(line);
      if (options.maxPackets !== undefined && timeline.count > options.maxPackets) {
        stopped = true;
        stop.abort();
      }
    },
  });
  if (stopped && !options.signal?.aborted) return { ok: true, timeline: timeline.finish(), stopped: true };
  if (result.aborted || result.exitCode !== 0) return probeFailure(result, path, options);
  return { ok: true, timeline: timeline.finish(), stopped: false };
}

/** The confined input as ffprobe takes it: the file as its last argument, without -i. */
const ffprobeInput = (path: string): string[] => confinedInput(path).filter((arg) => arg !== '-i');

const runFfprobe = (ffprobe: string, args: string[], { signal, memoryLimitBytes }: ProbeOptions): Promise<MediaProcessResult> =>
  runMediaProcess(ffprobe, args, { collectStdout: true, killGraceMs: 0, ...(signal ? { signal } : {}), ...(memoryLimitBytes ? { memoryLimitBytes } : {}) });

function probeFailure(result: MediaProcessResult, path: string, options: ProbeOptions): ProbeFailure {
  const failure = (reason: string): ProbeFailure => ({ ok: false, reason, aborted: result.aborted, reachedMemoryLimit: reachedMemoryLimit(result, options.memoryLimitBytes) });
  if (result.aborted) return failure('aborted');
  // A format the confinement refuses (a playlist, an image, ANSI art...) says only "Invalid argument": name the format.
  const refused = result.stderrTail.map((l) => /\[(\S+) @ 0x[0-9a-f]+\] Format not on whitelist/.exec(l)?.[1]).find((f) => f !== undefined);
  if (refused) return failure(`its format, ${refused}, is not an accepted media format`);
  // ffprobe prefixes its complaint with the input name: keep the complaint, never the server's path.
  return failure(failureLine(result).replace(`file:${path}: `, '').replaceAll(`file:${path}`, 'the file').replaceAll(path, 'the file'));
}
