import { FMP4_SEGMENT_OPTIONS, H264_IN_BAND_PARAMETER_SETS } from '../../platform/media/fmp4-for-players.js';
import { LIVE_INDEX_FILE, LIVE_SINGLE_PLAYLISTS } from '../../platform/media/media-layout.js';
import { AUDIO_KBPS, LIVE_SEGMENT_S, liveLadders, type LiveOutputOptions } from './live-profiles.js';
import type { OutputProfile } from './managed-slicers.schema.js';

/** The one media playlist of `passthrough` and of `audio-only` (the edge looks for them when ffmpeg's index names no variant). */
const [MAIN_PLAYLIST, AUDIO_PLAYLIST] = LIVE_SINGLE_PLAYLISTS;

/*
 * Test fixtures only: a live window written by ffmpeg's own HLS muxer, for tests of what reads
 * windows from disk (players, the edge). Slicers no longer write this way: the server's LL-HLS
 * window (ll-hls-output.ts) is the one writer of a live window (issue 42).
 */

/**
 * ffmpeg's output arguments for a profile, written into the current directory (the process
 * runs with the slicer's output directory as its working directory): `index.m3u8` is always a
 * multivariant playlist, each rendition a rolling live window of fMP4 segments whose numbers
 * come from the wall clock, so they keep growing across restarts of the process. Segments are
 * timed as packaged ones are (fmp4-for-players.ts): each one's first frame is presented at its
 * decode time, which MSE players (hls.js) need when the source or x264 uses B-frames; that holds
 * for stream copy too (`passthrough`). Transcoded video also repeats SPS and PPS before every keyframe.
 */
export function liveOutputArgs(profile: OutputProfile, options: LiveOutputOptions): string[] {
  const hls = [
    '-f', 'hls',
    '-hls_segment_type', 'fmp4',
    '-hls_time', String(LIVE_SEGMENT_S),
    '-hls_list_size', String(options.windowSegments),
    // omit_endlist: a source that drops off is a pause of the live event, not its end.
    '-hls_flags', 'delete_segments+independent_segments+omit_endlist+temp_file',
    '-hls_start_number_source', 'datetime',
    '-master_pl_name', LIVE_INDEX_FILE,
    '-hls_fmp4_init_filename', 'init.mp4',
    ...FMP4_SEGMENT_OPTIONS,
  ];
  if (profile === 'passthrough') {
    // Repackaging only: the source's codecs as they come (ADTS AAC from MPEG-TS needs its header rewritten for MP4).
    return ['-map', '0:v?', '-map', '0:a?', '-c', 'copy', '-bsf:a', 'aac_adtstoasc', ...hls, '-hls_segment_filename', 'seg_main_%d.m4s', MAIN_PLAYLIST];
  }
  if (profile === 'audio-only') {
    return ['-map', '0:a', '-c:a', 'aac', '-b:a', `${AUDIO_KBPS}k`, ...hls, '-hls_segment_filename', 'seg_audio_%d.m4s', AUDIO_PLAYLIST];
  }
  const ladder = liveLadders[profile];
  const args: string[] = [];
  ladder.forEach(() => args.push('-map', '0:v', '-map', '0:a'));
  args.push('-c:v', 'libx264', '-preset', options.preset, '-pix_fmt', 'yuv420p', '-sc_threshold', '0', '-force_key_frames', `expr:gte(t,n_forced*${LIVE_SEGMENT_S})`, ...H264_IN_BAND_PARAMETER_SETS);
  ladder.forEach((r, i) => {
    args.push(`-filter:v:${i}`, `scale=-2:${r.height}`, `-b:v:${i}`, `${r.videoKbps}k`, `-maxrate:v:${i}`, `${Math.round(r.videoKbps * 1.1)}k`, `-bufsize:v:${i}`, `${r.videoKbps * 2}k`);
  });
  args.push('-c:a', 'aac', '-b:a', `${AUDIO_KBPS}k`);
  const streamMap = ladder.map((r, i) => `v:${i},a:${i},name:${r.name}`).join(' ');
  return [...args, ...hls, '-var_stream_map', streamMap, '-hls_segment_filename', 'seg_%v_%d.m4s', 'media_%v.m3u8'];
}
