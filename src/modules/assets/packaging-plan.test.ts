import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProbedMedia, ProbedStream } from '../../platform/media/ffprobe.js';
import { MAX_RENDITIONS } from '../../platform/media/packaged-manifest.js';
import { PacketTimeline } from '../../platform/media/packet-timeline.js';
import { describeSource as describeWithin, packagingArgs, planRenditions, type SourceBudgets, type SourceMedia } from './packaging-plan.js';

const video = (extra: Partial<ProbedStream> = {}): ProbedStream => ({ index: 0, codec_type: 'video', codec_name: 'h264', width: 1920, height: 1080, avg_frame_rate: '30000/1001', ...extra });
const media = (streams: ProbedStream[], duration = '12.5'): ProbedMedia => ({ streams, format: { duration } });
/** Budgets no test source reaches, so each check is seen alone. */
const NO_BUDGET: SourceBudgets = { maxDurationS: 800_000, maxFrames: 1e12, maxStreams: 1000, maxGapS: 0 };
const describeSource = (m: ProbedMedia) => describeWithin(m, NO_BUDGET);
const source = (extra: Partial<SourceMedia> = {}): SourceMedia => ({ width: 1920, height: 1080, fps: '30/1', fpsValue: 30, durationS: 10, hasAudio: true, interlaced: false, ...extra });

test('a plan always fits a packaged manifest: each rung once, highest first, at most MAX_RENDITIONS (the highest)', () => {
  const ladder = [...Array.from({ length: MAX_RENDITIONS + 4 }, (_, i) => 1000 - i * 10), 360, 990];
  const plan = planRenditions(ladder, source());
  assert.equal(plan.length, MAX_RENDITIONS);
  assert.deepEqual(plan.map((r) => r.height), Array.from({ length: MAX_RENDITIONS }, (_, i) => 1000 - i * 10));
  assert.deepEqual(planRenditions([360, 720, 720], source()).map((r) => r.name), ['720p', '360p']);
});

test('renditions at or below the source, never upscaled; a small source keeps its own size', () => {
  const names = (s: SourceMedia, ladder = [1080, 720, 360]) => planRenditions(ladder, s).map((r) => `${r.name}:${r.width}x${r.height}`);
  assert.deepEqual(names(source()), ['1080p:1920x1080', '720p:1280x720', '360p:640x360']);
  assert.deepEqual(names(source({ width: 1280, height: 720 })), ['720p:1280x720', '360p:640x360']);
  assert.deepEqual(names(source({ width: 320, height: 180 })), ['180p:320x180']);
  assert.deepEqual(names(source({ width: 321, height: 181 })), ['180p:320x180'], 'even sizes for H.264 4:2:0');
  // A rung names the short side: a portrait 1080p is 1080 wide.
  assert.deepEqual(names(source({ width: 1080, height: 1920 })), ['1080p:1080x1920', '720p:720x1280', '360p:360x640']);
  // 4:3 keeps its shape.
  assert.deepEqual(names(source({ width: 640, height: 480 })), ['360p:480x360']);
});

test('bit rates follow pixels per second, with a floor', () => {
  const [hd, sd] = planRenditions([1080, 360], source());
  assert.equal(hd?.videoKbps, Math.round((1920 * 1080 * 30 * 0.08) / 1000));
  assert.equal(hd?.audioKbps, 128);
  assert.equal(sd?.audioKbps, 96);
  assert.equal(planRenditions([90], source({ width: 160, height: 90, fpsValue: 10, fps: '10/1' }))[0]?.videoKbps, 100);
});

test('describeSource reads displayed size (rotation, pixel aspect), frame rate, audio', () => {
  const plain = describeSource(media([video(), { index: 1, codec_type: 'audio' }]));
  assert.deepEqual(plain, { ok: true, source: { width: 1920, height: 1080, fps: '30000/1001', fpsValue: 30000 / 1001, durationS: 12.5, hasAudio: true, interlaced: false } });
  const rotated = describeSource(media([video({ side_data_list: [{ side_data_type: 'Display Matrix', rotation: -90 }] })]));
  assert.ok(rotated.ok && rotated.source.width === 1080 && rotated.source.height === 1920 && !rotated.source.hasAudio);
  const anamorphic = describeSource(media([video({ width: 720, height: 576, sample_aspect_ratio: '64:45', field_order: 'tt' })]));
  assert.ok(anamorphic.ok && anamorphic.source.width === 1024 && anamorphic.source.height === 576 && anamorphic.source.interlaced);
  const fast = describeSource(media([video({ avg_frame_rate: '120/1' })]));
  assert.ok(fast.ok && fast.source.fps === '60/1');
  const unknown = describeSource(media([video({ avg_frame_rate: '0/0', r_frame_rate: '0/0' })]));
  assert.ok(unknown.ok && unknown.source.fps === '30/1');
});

test('describeSource refuses what cannot be packaged, saying why', () => {
  const reason = (m: ProbedMedia) => {
    const check = describeSource(m);
    return check.ok ? 'ok' : check.reason;
  };
  assert.match(reason(media([{ index: 0, codec_type: 'audio' }])), /no video stream \(audio-only/);
  assert.match(reason(media([{ index: 0, codec_type: 'audio' }, video({ disposition: { attached_pic: 1 } })])), /no video stream/, 'cover art is no video');
  assert.match(reason(media([{ index: 0, codec_type: 'data' }])), /^The file has no video stream$/);
  assert.match(reason(media([video({ width: 0 })])), /no picture size/);
  assert.match(reason(media([video({ width: 16384, height: 16384 })])), /at most 8192/);
  assert.match(reason(media([video()], 'N/A')), /no duration/);
  // 200,000 segments of 4 s: a longer source would break the manifest's segment bound.
  assert.equal(reason(media([video()], '800000')), 'ok');
  assert.equal(reason(media([video()], '800004')), 'The video is longer than 222 hours, the most that can be packaged');
});

test('one ffmpeg run: forced keyframes every 4 s, fixed GOP, fMP4 HLS per rendition, a silent track when needed', () => {
  const plan = planRenditions([180, 144], source({ width: 320, height: 180, fps: '25/1', fpsValue: 25, hasAudio: false }));
  const args = packagingArgs(plan, source({ width: 320, height: 180, fps: '25/1', fpsValue: 25, hasAudio: false }), { source: '/m/src', workDir: '/m/work' }, 'veryfast', ['-i', 'file:/m/src']);
  const after = (flag: string) => args[args.indexOf(flag) + 1];
  assert.equal(after('-filter_complex'), '[0:v:0]fps=25/1,split=2[s0][s1];[s0]scale=320:180,setsar=1[v0];[s1]scale=256:144,setsar=1[v1]');
  assert.equal(after('-g'), '100');
  assert.equal(after('-sc_threshold'), '0');
  assert.equal(after('-force_key_frames'), 'expr:gte(t,n_forced*4)');
  assert.equal(after('-hls_segment_type'), 'fmp4');
  assert.equal(after('-var_stream_map'), 'v:0,a:0,name:180p v:1,a:1,name:144p');
  assert.ok(args.includes('anullsrc=channel_layout=stereo:sample_rate=48000'));
  assert.deepEqual(args.filter((_, i) => args[i - 1] === '-map'), ['[v0]', '1:a:0', '[v1]', '1:a:0']);
  assert.equal(args.at(-1), '/m/work/%v/playlist.m3u8');
  // The last -t (the first is the silent track's input option) bounds the output.
  const t = args.lastIndexOf('-t');
  assert.equal(args[t + 1], '10.000', 'the output ends at the declared duration');
  assert.ok(t > args.indexOf('-c:a') && t < args.indexOf('hls'), '-t is an output option');
});

test('budgets: too many streams, too long (a timestamp gap counts in full) or too many frames is refused before any encoding', () => {
  const budgets: SourceBudgets = { maxDurationS: 3600, maxFrames: 200_000, maxStreams: 4, maxGapS: 60 };
  const reason = (m: ProbedMedia) => {
    const check = describeWithin(m, budgets);
    return check.ok ? 'ok' : check.reason;
  };
  assert.equal(reason(media([video()], '3600')), 'ok');
  // The gap file of finding N7: a few frames, then one at 2 h.
  assert.equal(reason(media([video({ avg_frame_rate: '60/1' })], '7200.016')),
    'The video declares a duration of 7200 s (2 h 0 min); at most 3600 s (1 h 0 min) can be packaged on this server (a gap in its timestamps counts in full)');
  // 3,600 s at 60 fps is 216,000 frames to encode.
  assert.equal(reason(media([video({ avg_frame_rate: '60/1' })], '3600')), 'The video would take 216000 frames to package; at most 200000 are packaged on this server');
  // A declared frame count is decoding work too (a 1,000 fps source packaged at 60).
  assert.match(reason(media([video({ avg_frame_rate: '1000/1', nb_frames: '500000' })], '500')), /500000 frames/);
  const many = Array.from({ length: 12 }, (_, index) => video({ index }));
  assert.equal(reason(media(many)), 'The file has 12 streams; at most 4 (video, audio, subtitles and data together) are accepted');
});

test('the packet timeline: a gap longer than PLAYLINE_PACKAGING_MAX_GAP_S is refused, naming where and how long; the real packet count is the frame count', () => {
  const budgets: SourceBudgets = { maxDurationS: 14_400, maxFrames: 864_000, maxStreams: 8, maxGapS: 60 };
  const timelineOf = (times: number[], origin?: number) => {
    const timeline = new PacketTimeline(origin);
    for (const t of times) timeline.add(t);
    return timeline.finish();
  };
  const reason = (m: ProbedMedia, times: number[], within = budgets, origin?: number) => {
    const check = describeWithin(m, within, timelineOf(times, origin));
    return check.ok ? 'ok' : check.reason;
  };
  // The gap file of finding N7 at the default budgets: 7,200 s and 432,000 frames pass both, the gap does not.
  const sixty = Array.from({ length: 59 }, (_, i) => Math.round((i * 1000) / 60) / 1000);
  const gapFile = media([video({ avg_frame_rate: '60/1' })], '7200.016');
  assert.equal(describeWithin(gapFile, budgets).ok, true, 'without the timeline, the defaults let it through');
  assert.equal(reason(gapFile, [...sixty, 7200]),
    'The video has no frame for 7199 s (1 h 59 min), from 0.97 s to 7200 s; at most 60 s without a frame can be packaged on this server (PLAYLINE_PACKAGING_MAX_GAP_S): packaging would fill the gap with repeated frames');
  assert.equal(reason(gapFile, [...sixty, 7200], { ...budgets, maxGapS: 0 }), 'ok', '0 turns the check off');
  // A gap before the first frame counts from the file's start (another stream starting at 0).
  assert.equal(reason(media([video()], '100'), [90, 90.04, 90.08], budgets, 0),
    'The video has no frame for 90 s, before its first frame, at 90 s; at most 60 s without a frame can be packaged on this server (PLAYLINE_PACKAGING_MAX_GAP_S): packaging would fill the gap with repeated frames');
  // Just over and at the limit.
  assert.match(reason(media([video()], '70'), [0, 60.5]), /no frame for 60\.5 s, from 0 s to 60\.5 s; at most 60 s/);
  assert.equal(reason(media([video()], '70'), [0, 60]), 'ok');
  // A slideshow: a frame every 10 s (0.1 fps) is packaged.
  assert.equal(reason(media([video({ avg_frame_rate: '1/10' })], '60'), [0, 30, 10, 20, 50, 40]), 'ok');
  // The packet count is the decoding work: 300,000 packets in 100 s of a 3,000 fps source.
  const dense = Array.from({ length: 300_000 }, (_, i) => i / 3000);
  assert.equal(reason(media([video({ avg_frame_rate: '3000/1' })], '100'), dense, { ...budgets, maxFrames: 200_000 }), 'The video holds at least 300000 frames; at most 200000 are packaged on this server');
  // ... and a declared frame count that the packets do not bear out is not held against the file.
  assert.equal(reason(media([video({ avg_frame_rate: '25/1', nb_frames: '5000000' })], '10'), Array.from({ length: 250 }, (_, i) => i / 25)), 'ok');
});

test('issue 35: a 3.9 h stream of few frames declaring 60 fps is packaged at the rate its frames have, so the output (duration x rate) is small; real rates are kept', () => {
  const budgets: SourceBudgets = { maxDurationS: 14_400, maxFrames: 864_000, maxStreams: 8, maxGapS: 60 };
  const described = (m: ProbedMedia, times: number[]) => {
    const timeline = new PacketTimeline(0);
    for (const t of times) timeline.add(t);
    const check = describeWithin(m, budgets, timeline.finish());
    assert.ok(check.ok, check.ok ? '' : check.reason);
    return check.source;
  };
  const duration = 3.9 * 3600;
  // One frame every 50 s, within the 60 s gap budget: 281 frames over 14,040 s.
  const sparse = Array.from({ length: Math.floor(duration / 50) + 1 }, (_, i) => i * 50);
  const slideshow = described(media([video({ avg_frame_rate: '60/1' })], String(duration)), sparse);
  assert.equal(slideshow.fps, '1/1', 'not the declared 60 fps');
  assert.ok(slideshow.durationS * slideshow.fpsValue <= duration, `output frames ${slideshow.durationS * slideshow.fpsValue}, not 842,400`);
  // A real 30000/1001 video, and a short 25 fps video under a longer audio track, keep their rates.
  const ntsc = Array.from({ length: 300 }, (_, i) => (i * 1001) / 30000);
  assert.equal(described(media([video()], '10.01'), ntsc).fps, '30000/1001');
  const short = Array.from({ length: 250 }, (_, i) => i / 25);
  assert.equal(described(media([video({ avg_frame_rate: '25/1' })], '60'), short).fps, '25/1');
  // A frame rate that is not far from the declared one (a variable-rate phone video) is kept.
  const vfr = Array.from({ length: 200 }, (_, i) => i / 20);
  assert.equal(described(media([video({ avg_frame_rate: '30/1' })], '10'), vfr).fps, '30/1');
});
