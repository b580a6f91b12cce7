import type { ProbedMedia, ProbedStream } from '../../platform/media/ffprobe.js';
import type { PacketTimelineSummary } from '../../platform/media/packet-timeline.js';
import { FMP4_SEGMENT_OPTIONS, H264_IN_BAND_PARAMETER_SETS } from '../../platform/media/fmp4-for-players.js';
import { MAX_RENDITIONS, MAX_SEGMENTS } from '../../platform/media/packaged-manifest.js';

/** Every packaged asset is cut in segments of this length (seconds), keyframes aligned on them. */
export const SEGMENT_S = 4;

/** The largest picture side accepted (a bigger one is most likely a decoding bomb). */
const MAX_SIDE = 8192;

/** The longest source packaged: more would cut more segments than a packaged manifest holds. */
const MAX_DURATION_S = MAX_SEGMENTS * SEGMENT_S;

/** The source as packaging needs it: displayed size (after rotation and pixel aspect), frame rate, audio. */
export interface SourceMedia {
  width: number;
  height: number;
  /** Output frame rate as ffmpeg's `fps` filter takes it, e.g. `30000/1001`. */
  fps: string;
  fpsValue: number;
  durationS: number;
  hasAudio: boolean;
  interlaced: boolean;
}

export interface RenditionPlan {
  name: string;
  width: number;
  height: number;
  videoKbps: number;
  audioKbps: number;
}

/** What one packaging may take on (PLAYLINE_PACKAGING_MAX_DURATION_S, _MAX_FRAMES, _MAX_GAP_S, PLAYLINE_MEDIA_MAX_STREAMS). */
export interface SourceBudgets {
  maxDurationS: number;
  maxFrames: number;
  maxStreams: number;
  /** The longest time without a video frame (seconds); 0: any. */
  maxGapS: number;
}

export type SourceCheck = { ok: true; source: SourceMedia } | { ok: false; reason: string };

const rational = (value: string | undefined): { num: number; den: number } | undefined => {
  const [num, den] = (value ?? '').split('/').map(Number);
  return num !== undefined && den !== undefined && num > 0 && den > 0 && Number.isFinite(num / den) ? { num, den } : undefined;
};

/** Degrees the player must turn the picture (a phone's portrait video is stored landscape). */
const rotationOf = (stream: ProbedStream): number => {
  const fromSideData = stream.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation;
  const degrees = fromSideData ?? Number(stream.tags?.rotate ?? 0);
  return Number.isFinite(degrees) ? Math.abs(degrees) % 180 : 0;
};

/** The video stream packaging reads (`0:v:0`): the first one that is not cover art. */
export const videoStreamOf = (media: ProbedMedia): ProbedStream | undefined =>
  media.streams.find((s) => s.codec_type === 'video' && s.disposition?.attached_pic !== 1);

/**
 * Reads what packaging needs from ffprobe's description, or says why the file cannot be packaged:
 * among the reasons, a source over the budgets (too many streams, too long, too many frames),
 * refused before any encoding. The duration is the declared one, so a timestamp gap (a few frames,
 * then one at 2 h, which the `fps` filter would fill with repeated frames) counts in full.
 * With the video's packet timeline (`scanVideoPackets`), a gap longer than `maxGapS` is refused
 * whatever the duration, and the real packet count replaces the count the container declares.
 */
export function describeSource(media: ProbedMedia, budgets: SourceBudgets, timeline?: PacketTimelineSummary): SourceCheck {
  if (media.streams.length > budgets.maxStreams) return { ok: false, reason: tooManyStreams(media.streams.length, budgets.maxStreams) };
  const video = videoStreamOf(media);
  if (!video) {
    const audioOnly = media.streams.some((s) => s.codec_type === 'audio');
    return { ok: false, reason: audioOnly ? 'The file has no video stream (audio-only files are not supported)' : 'The file has no video stream' };
  }
  const codedW = video.width ?? 0;
  const codedH = video.height ?? 0;
  if (codedW <= 0 || codedH <= 0) return { ok: false, reason: 'The video stream has no picture size (corrupt or unsupported video)' };
  if (codedW > MAX_SIDE || codedH > MAX_SIDE) return { ok: false, reason: `The video is ${codedW}x${codedH}; at most ${MAX_SIDE} pixels on a side are supported` };
  const sar = rational(video.sample_aspect_ratio?.replace(':', '/'));
  let width = sar ? Math.round((codedW * sar.num) / sar.den) : codedW;
  let height = codedH;
  if (rotationOf(video) === 90) [width, height] = [height, width];

  const durationS = Number(media.format.duration ?? video.duration);
  if (!Number.isFinite(durationS) || durationS <= 0) return { ok: false, reason: 'The file has no duration (an unfinished recording or a still image)' };
  if (durationS > MAX_DURATION_S) return { ok: false, reason: `The video is longer than ${Math.floor(MAX_DURATION_S / 3600)} hours, the most that can be packaged` };
  if (durationS > budgets.maxDurationS) {
    return { ok: false, reason: `The video declares a duration of ${seconds(durationS)}; at most ${seconds(budgets.maxDurationS)} can be packaged on this server (a gap in its timestamps counts in full)` };
  }

  const gap = timeline?.largestGap;
  if (gap && budgets.maxGapS > 0 && gap.lengthS > budgets.maxGapS) {
    const where = timeline?.firstS !== undefined && gap.toS === timeline.firstS ? `before its first frame, at ${at(gap.toS)}` : `from ${at(gap.fromS)} to ${at(gap.toS)}`;
    return {
      ok: false,
      reason: `The video has no frame for ${span(gap.lengthS)}, ${where}; at most ${seconds(budgets.maxGapS)} without a frame can be packaged on this server (PLAYLINE_PACKAGING_MAX_GAP_S): packaging would fill the gap with repeated frames`,
    };
  }

  // A variable or unknown frame rate is packaged at a constant one: 30 fps unless the source says otherwise, 60 at most.
  const rate = rational(video.avg_frame_rate) ?? rational(video.r_frame_rate);
  const declaredRate = !rate || rate.num / rate.den > 60 ? { num: rate ? 60 : 30, den: 1 } : rate;
  // A source whose frames are far fewer than its declared rate (issue 35: a 3.9 h stream of a few
  // frames declaring 60 fps) is packaged at the rate its frames have, rounded up to whole frames a
  // second: the fps filter would otherwise encode hours of repeated frames, and the output's
  // duration x frame rate is the work a packaging slot is held for.
  // Over the video's own span (a short video under a long audio track keeps its rate).
  const videoSpanS = timeline?.firstS !== undefined && timeline.lastS !== undefined ? timeline.lastS - timeline.firstS : 0;
  const real = timeline && videoSpanS > 0 ? timeline.packets / videoSpanS : undefined;
  const capped = real !== undefined && real < declaredRate.num / declaredRate.den / 2 ? { num: Math.max(1, Math.ceil(real)), den: 1 } : declaredRate;
  const encoded = Math.ceil((durationS * capped.num) / capped.den);
  // Frames decoded: the packets read when they were counted, else what the container declares.
  const declared = timeline ? timeline.packets : Number(video.nb_frames ?? 0);
  const frames = Math.max(encoded, Number.isFinite(declared) ? declared : 0);
  if (timeline && timeline.packets > budgets.maxFrames && timeline.packets >= encoded) {
    // The scan stops once past the budget: the count is a lower bound.
    return { ok: false, reason: `The video holds at least ${timeline.packets} frames; at most ${budgets.maxFrames} are packaged on this server` };
  }
  if (frames > budgets.maxFrames) {
    return { ok: false, reason: `The video would take ${frames} frames to package; at most ${budgets.maxFrames} are packaged on this server` };
  }
  return {
    ok: true,
    source: {
      width,
      height,
      fps: `${capped.num}/${capped.den}`,
      fpsValue: capped.num / capped.den,
      durationS,
      hasAudio: media.streams.some((s) => s.codec_type === 'audio'),
      interlaced: ['tt', 'bb', 'tb', 'bt'].includes(video.field_order ?? ''),
    },
  };
}

/** Why a file with too many streams is refused (the same words from the header count and the full probe). */
export const tooManyStreams = (streams: number, max: number): string =>
  `The file has ${streams} streams; at most ${max} (video, audio, subtitles and data together) are accepted`;

/** A duration for a failure reason: `7200 s (2 h 0 min)`. */
const seconds = (s: number): string => {
  const whole = Math.round(s);
  return whole >= 3600 ? `${whole} s (${Math.floor(whole / 3600)} h ${Math.floor((whole % 3600) / 60)} min)` : `${whole} s`;
};

/** A point of the timeline for a failure reason: `0.97 s`, `7200 s`. */
const at = (s: number): string => `${Number(s.toFixed(2))} s`;

/** A length of time for a failure reason: `61.5 s`, `7199 s (1 h 59 min)`. */
const span = (s: number): string => (s >= 3600 ? seconds(s) : `${Number(s.toFixed(1))} s`);

const even = (value: number) => Math.max(2, Math.round(value / 2) * 2);

/**
 * The renditions of one source: the ladder's rungs at or below its short side (a rung names
 * the short side, so a portrait 1080p is 1080 wide), never upscaled; a source smaller than
 * every rung gets one rendition at its own size. Highest first, each rung once and at most
 * MAX_RENDITIONS of them (the highest), so the plan always fits a packaged manifest. Video bit
 * rate follows pixels per second (0.08 bit per pixel, at least 100 kbit/s).
 */
export function planRenditions(ladder: readonly number[], source: SourceMedia): RenditionPlan[] {
  const portrait = source.height > source.width;
  const short = portrait ? source.width : source.height;
  const long = portrait ? source.height : source.width;
  let rungs = [...new Set(ladder)].filter((r) => r > 0 && r <= short).sort((a, b) => b - a).slice(0, MAX_RENDITIONS);
  if (rungs.length === 0) rungs = [Math.max(2, short - (short % 2))];
  return rungs.map((rung) => {
    const shortSide = even(rung);
    const longSide = even((rung * long) / short);
    const [width, height] = portrait ? [shortSide, longSide] : [longSide, shortSide];
    return {
      name: `${rung}p`,
      width,
      height,
      videoKbps: Math.max(100, Math.round((width * height * source.fpsValue * 0.08) / 1000)),
      audioKbps: rung >= 480 ? 128 : 96,
    };
  });
}

export interface PackagingPaths {
  source: string;
  /** This attempt's output directory; renditions go to `<workDir>/<name>/`. */
  workDir: string;
}

/**
 * One ffmpeg run for every rendition: decode once, split, scale; H.264 High + AAC stereo;
 * keyframes forced every SEGMENT_S seconds of output time (the same instants in every
 * rendition, so segments align across them) with a fixed GOP and no scene-cut keyframes;
 * fMP4 HLS segments of SEGMENT_S seconds. A source without audio gets a silent track, so every
 * asset plays the same way. The playlists are EVENT playlists: ffmpeg writes them after each
 * segment it closes (a VOD one only at the end), which is how a running packaging is seen to be
 * playable (progressiveOutputOf); the edge writes the playlists players get.
 */
export function packagingArgs(plan: readonly RenditionPlan[], source: SourceMedia, paths: PackagingPaths, preset: string, confinedInput: string[]): string[] {
  const gop = Math.max(1, Math.round(source.fpsValue * SEGMENT_S));
  const deinterlace = source.interlaced ? 'yadif=deint=interlaced,' : '';
  const split = plan.length > 1 ? `split=${plan.length}${plan.map((_, i) => `[s${i}]`).join('')}` : 'null[s0]';
  const scales = plan.map((r, i) => `[s${i}]scale=${r.width}:${r.height},setsar=1[v${i}]`);
  const filter = [`[0:v:0]${deinterlace}fps=${source.fps},${split}`, ...scales].join(';');
  const audio = source.hasAudio ? '0:a:0' : '1:a:0';
  const args = ['-hide_banner', '-nostdin', '-y', '-v', 'error', '-nostats', '-progress', 'pipe:1', ...confinedInput];
  if (!source.hasAudio) args.push('-f', 'lavfi', '-t', source.durationS.toFixed(3), '-i', 'anullsrc=channel_layout=stereo:sample_rate=48000');
  args.push('-filter_complex', filter);
  plan.forEach((_, i) => args.push('-map', `[v${i}]`, '-map', audio));
  args.push('-c:v', 'libx264', '-preset', preset, '-profile:v', 'high', '-pix_fmt', 'yuv420p');
  plan.forEach((r, i) => {
    args.push(`-b:v:${i}`, `${r.videoKbps}k`, `-maxrate:v:${i}`, `${Math.round(r.videoKbps * 1.1)}k`, `-bufsize:v:${i}`, `${r.videoKbps * 2}k`);
    args.push(`-b:a:${i}`, `${r.audioKbps}k`);
  });
  args.push('-g', String(gop), '-keyint_min', String(gop), '-sc_threshold', '0', '-force_key_frames', `expr:gte(t,n_forced*${SEGMENT_S})`);
  args.push('-c:a', 'aac', '-ac', '2', '-ar', '48000');
  // Timing and parameter sets every player reads alike (a preroll then the content, see fmp4-for-players.ts).
  args.push(...H264_IN_BAND_PARAMETER_SETS, ...FMP4_SEGMENT_OPTIONS);
  // The output ends at the declared duration, whatever timestamps the source holds beyond it.
  args.push('-t', source.durationS.toFixed(3));
  args.push(
    '-f', 'hls', '-hls_time', String(SEGMENT_S), '-hls_playlist_type', 'event', '-hls_segment_type', 'fmp4', '-hls_flags', 'independent_segments',
    '-hls_fmp4_init_filename', 'init.mp4', '-hls_segment_filename', `${paths.workDir}/%v/seg_%05d.m4s`,
    '-var_stream_map', plan.map((r, i) => `v:${i},a:${i},name:${r.name}`).join(' '),
    '-master_pl_name', 'master.m3u8', `${paths.workDir}/%v/playlist.m3u8`,
  );
  return args;
}

/** A poster frame: 10 % into the video (at most 5 s), at the top rendition's size. */
export function posterArgs(top: RenditionPlan, source: SourceMedia, posterPath: string, confinedInput: string[]): string[] {
  const at = source.durationS > 1 ? Math.min(source.durationS * 0.1, 5) : 0;
  return [
    '-hide_banner', '-nostdin', '-y', '-v', 'error', '-ss', at.toFixed(3), ...confinedInput,
    '-frames:v', '1', '-vf', `scale=${top.width}:${top.height},setsar=1`, '-q:v', '3', '-f', 'image2', posterPath,
  ];
}
