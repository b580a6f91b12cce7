import { failureLine, runMediaProcess } from './media-process.js';

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

/** Input options that confine a tool to one local file read by a known media demuxer. */
export const confinedInput = (path: string): string[] => ['-protocol_whitelist', 'file', '-format_whitelist', MEDIA_DEMUXERS, '-i', `file:${path}`];

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
  profile?: string;
  level?: number;
  disposition?: { attached_pic?: number };
  tags?: Record<string, string>;
  side_data_list?: Array<{ side_data_type?: string; rotation?: number }>;
}

export interface ProbedMedia {
  streams: ProbedStream[];
  format: { format_name?: string; duration?: string; size?: string };
}

export type ProbeOutcome = { ok: true; media: ProbedMedia } | { ok: false; reason: string; aborted: boolean };

/** Runs ffprobe on one local file, confined to media demuxers. Never throws. */
export async function probeFile(ffprobe: string, path: string, signal?: AbortSignal): Promise<ProbeOutcome> {
  const args = ['-hide_banner', '-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', ...confinedInput(path)];
  // ffprobe takes the input as its last argument, without -i.
  const index = args.indexOf('-i');
  args.splice(index, 1);
  const result = await runMediaProcess(ffprobe, args, { collectStdout: true, killGraceMs: 0, ...(signal ? { signal } : {}) });
  if (result.aborted) return { ok: false, reason: 'aborted', aborted: true };
  if (result.exitCode !== 0) {
    // A format the confinement refuses (a playlist, an image, ANSI art...) says only "Invalid argument": name the format.
    const refused = result.stderrTail.map((l) => /\[(\S+) @ 0x[0-9a-f]+\] Format not on whitelist/.exec(l)?.[1]).find((f) => f !== undefined);
    if (refused) return { ok: false, reason: `its format, ${refused}, is not an accepted media format`, aborted: false };
    // ffprobe prefixes its complaint with the input name: keep the complaint, never the server's path.
    const line = failureLine(result).replace(`file:${path}: `, '').replaceAll(`file:${path}`, 'the file').replaceAll(path, 'the file');
    return { ok: false, reason: line, aborted: false };
  }
  try {
    const parsed = JSON.parse(result.stdout) as Partial<ProbedMedia>;
    return { ok: true, media: { streams: parsed.streams ?? [], format: parsed.format ?? {} } };
  } catch {
    return { ok: false, reason: 'ffprobe gave no readable description of the file', aborted: false };
  }
}
