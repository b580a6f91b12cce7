/**
 * ffmpeg output arguments that make packaged fMP4 HLS play alike in every player, for anything
 * that packages assets (the asset library, the simulator's test pattern).
 *
 * Players read fMP4 timing differently: ffmpeg and Safari apply the init segment's edit list,
 * MSE players (hls.js, Shaka, dash.js in Chromium) use only each fragment's decode time (tfdt)
 * and sample offsets. x264's B-frames put a video stream's first presentation time one or two
 * frames after its first decode time; ffmpeg's MP4 muxer hides that in the edit list, so an MSE
 * player places the video 80 ms (two frames at 25 fps) late in every period. hls.js maps each
 * period after an EXT-X-DISCONTINUITY to where the last one ended by its presentation times,
 * so a preroll left a buffered hole at its end (its audio ends before the delayed content
 * starts) and the content ended earlier than the timeline hls.js had computed (no `ended`).
 */

/**
 * Negative composition offsets (trun version 1): every fragment's first frame is presented at its
 * decode time, as every player reads it. A 90 kHz video timescale for every asset: a player that
 * keeps one init segment across a discontinuity (ffmpeg's HLS reader) still times the next period's
 * frames right.
 */
export const FMP4_SEGMENT_OPTIONS = ['-hls_segment_options', 'movflags=+negative_cts_offsets:video_track_timescale=90000'];

/**
 * SPS and PPS before every keyframe as well as in the init segment: ffmpeg's HLS reader keeps the
 * first period's init segment across EXT-X-DISCONTINUITY, and a preroll of another picture size
 * decoded the content with the preroll's parameter sets (hundreds of "concealing errors" lines).
 */
export const H264_IN_BAND_PARAMETER_SETS = ['-x264-params', 'repeat-headers=1'];
