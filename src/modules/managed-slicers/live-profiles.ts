import { H264_IN_BAND_PARAMETER_SETS } from '../../platform/media/fmp4-for-players.js';
import type { OutputProfile } from './managed-slicers.schema.js';

/** One rung of a slicer's live ladder. */
export interface LiveRendition {
  /** Names the rendition's media playlist (`media_<name>.m3u8`) and segments. */
  name: string;
  /** Picture height; the width follows the source's aspect ratio. */
  height: number;
  videoKbps: number;
}

/** The ladder of each transcoding profile, highest first. `passthrough` and `audio-only` have none. */
export const liveLadders: Record<Exclude<OutputProfile, 'passthrough' | 'audio-only'>, LiveRendition[]> = {
  'sd-480p': [{ name: '480p', height: 480, videoKbps: 1400 }],
  'hd-720p': [
    { name: '720p', height: 720, videoKbps: 2800 },
    { name: '480p', height: 480, videoKbps: 1400 },
  ],
  'hd-1080p': [
    { name: '1080p', height: 1080, videoKbps: 5000 },
    { name: '720p', height: 720, videoKbps: 2800 },
    { name: '480p', height: 480, videoKbps: 1400 },
  ],
  'uhd-2160p': [
    { name: '2160p', height: 2160, videoKbps: 15000 },
    { name: '1080p', height: 1080, videoKbps: 5000 },
    { name: '720p', height: 720, videoKbps: 2800 },
  ],
};

export const AUDIO_KBPS = 128;
/** Seconds per segment; keyframes are forced on that grid so every rendition cuts at the same instants. */
export const LIVE_SEGMENT_S = 2;

export interface LiveOutputOptions {
  /** Segments kept in the rolling window. */
  windowSegments: number;
  /** x264 preset of transcoding profiles. */
  preset: string;
}

/**
 * ffmpeg's fragment length for LL-HLS parts, µs: a fragment ends at the first frame at or past it.
 * 0.4 s divides the 2 s keyframe grid at every usual frame rate (10 frames at 25 fps, 12 at 30, 24
 * at 60), so a segment is five equal parts, none of them a short tail.
 */
const LIVE_FRAGMENT_US = 400_000;
/**
 * Seconds of EXT-X-PART-INF PART-TARGET: no part is longer (0.4 s, 0.417 s at 24 fps: one frame
 * past 0.4 s) and every part but a segment's last is at least 85 % of it (RFC 8216bis 4.4.4.9).
 */
export const LIVE_PART_TARGET_S = 0.44;

/**
 * The fragmented MP4 a low-latency rendition is written as (to a socket; LowLatencyOutput cuts it
 * into parts and segments). `delay_moov`, as ffmpeg's HLS muxer does: the moov waits for the first
 * fragment, so stream-copied AAC (ADTS from MPEG-TS) has its AudioSpecificConfig in the init
 * segment (`empty_moov` wrote an esds without it: no codec for players, hls.js bufferAddCodecError).
 */
const lowLatencyMp4 = (url: string): string[] => [
  '-f', 'mp4',
  '-movflags', '+frag_keyframe+delay_moov+default_base_moof+negative_cts_offsets',
  '-frag_duration', String(LIVE_FRAGMENT_US),
  // A keyframe starts a fragment only once the current one holds 85 % of the part target: a source
  // whose keyframes are off the 0.4 s grid (a 1 s GOP) would otherwise leave a short part before
  // each (RFC 8216bis allows short parts only at a segment's end). Such a keyframe is then inside a
  // part, and the segment ends at the next one on the grid (2 s for a 1 s GOP, 6 s for a 3 s GOP).
  '-min_frag_duration', String(Math.round(LIVE_PART_TARGET_S * 0.85 * 1e6)),
  '-video_track_timescale', '90000',
  url,
];

/** One rendition of a low-latency profile: its name, its index.m3u8 line (undefined: measured from the window) and its ffmpeg output. */
export interface LowLatencyOutputPlan {
  name: string;
  streamInf: string | undefined;
}

/**
 * ffmpeg's output arguments for a profile written as LL-HLS: the same renditions, codecs and
 * keyframe grid as `liveOutputArgs`, each rendition one fragmented MP4 output to `urlOf(name)`
 * (fragments of 0.4 s, within LIVE_PART_TARGET_S, a new one at each keyframe). The playlists, parts and
 * segments are written by the server (LowLatencyOutput), under the same names as ffmpeg's HLS muxer uses.
 */
export function liveLowLatencyOutputArgs(profile: OutputProfile, options: LiveOutputOptions, urlOf: (name: string) => string): { args: string[]; renditions: LowLatencyOutputPlan[] } {
  if (profile === 'passthrough') {
    return { args: ['-map', '0:v?', '-map', '0:a?', '-c', 'copy', '-bsf:a', 'aac_adtstoasc', ...lowLatencyMp4(urlOf('main'))], renditions: [{ name: 'main', streamInf: undefined }] };
  }
  if (profile === 'audio-only') {
    return { args: ['-map', '0:a', '-c:a', 'aac', '-b:a', `${AUDIO_KBPS}k`, ...lowLatencyMp4(urlOf('audio'))], renditions: [{ name: 'audio', streamInf: undefined }] };
  }
  const args: string[] = [];
  const renditions: LowLatencyOutputPlan[] = [];
  for (const r of liveLadders[profile]) {
    // zerolatency: no B-frames and no lookahead, so a frame leaves x264 as it comes in (about a second
    // sooner than with the preset alone: what the live-latency bench measured between capture and the server).
    args.push(
      '-map', '0:v', '-map', '0:a',
      '-c:v', 'libx264', '-preset', options.preset, '-tune', 'zerolatency', '-pix_fmt', 'yuv420p', '-sc_threshold', '0', '-force_key_frames', `expr:gte(t,n_forced*${LIVE_SEGMENT_S})`, ...H264_IN_BAND_PARAMETER_SETS,
      '-vf', `scale=-2:${r.height}`, '-b:v', `${r.videoKbps}k`, '-maxrate', `${Math.round(r.videoKbps * 1.1)}k`, '-bufsize', `${r.videoKbps * 2}k`,
      '-c:a', 'aac', '-b:a', `${AUDIO_KBPS}k`,
      ...lowLatencyMp4(urlOf(r.name)),
    );
    renditions.push({ name: r.name, streamInf: `#EXT-X-STREAM-INF:BANDWIDTH=${Math.round(r.videoKbps * 1.1 + AUDIO_KBPS) * 1000}` });
  }
  return { args, renditions };
}
