import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, types } from 'hls-parser';
import { encodeOnce, fragmentTiming, mediaToolsSkip } from '../../../test/helpers/media.js';
import type { Clock } from '../../platform/clock.js';
import { fragmentTiming as liveFragmentTiming } from '../../platform/media/fmp4-fragments.js';
import { tracksOfInit } from '../../platform/media/fmp4-tracks.js';
import { LIVE_PART_TARGET_S, LIVE_SEGMENT_S, liveLowLatencyOutputArgs } from './live-profiles.js';
import { LowLatencyOutput } from './ll-hls-output.js';
import type { OutputProfile } from './managed-slicers.schema.js';

const skip = await mediaToolsSkip();
const run = promisify(execFile);

/**
 * The low-latency output of a slicer on real ffmpeg output: a few seconds of a source with
 * B-frames (as an encoder sends it), run through each profile's LL arguments into the server's
 * LL-HLS window, which must be a valid LL-HLS playlist whose parts add up to its segments.
 */
describe('LL-HLS live output (real ffmpeg)', { skip }, () => {
  let scratch: string;
  let source: string;
  let oneSecondGop: string;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-ll-output-'));
    source = await encodeOnce(['-hide_banner', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25:duration=9', '-f', 'lavfi', '-i', 'sine=sample_rate=48000:duration=9',
      '-c:v', 'libx264', '-preset', 'veryfast', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '64k'], join(scratch, 'source.ts'));
    oneSecondGop = await encodeOnce(['-hide_banner', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=160x90:rate=25:duration=9', '-f', 'lavfi', '-i', 'sine=sample_rate=48000:duration=9',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '64k'], join(scratch, 'gop1.ts'));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  /** ffmpeg runs here faster than real time: a clock that moves 0.4 s (a part) each time it is read, as if each fragment came as captured. */
  const pacedClock = (): Clock => {
    let now = Date.UTC(2026, 10, 28, 4, 0, 0);
    return { now: () => (now += 400), setTimer: () => () => undefined };
  };

  /** Runs `profile`'s LL arguments on the source `runs` times into one window (each run one connection); returns its directory. */
  const slice = async (profile: OutputProfile, dir: string, runs = 1, input = source): Promise<string> => {
    mkdirSync(dir, { recursive: true });
    const errors: unknown[] = [];
    const plan = liveLowLatencyOutputArgs(profile, { windowSegments: 3, preset: 'ultrafast' }, () => '');
    const output = await LowLatencyOutput.open({
      dir, renditions: plan.renditions, clock: pacedClock(), segmentTargetS: LIVE_SEGMENT_S, partTargetS: LIVE_PART_TARGET_S,
      windowSegments: 3, maxSegmentBytes: 16 << 20, onError: (err) => errors.push(err),
    });
    try {
      for (let i = 0; i < runs; i++) {
        const args = liveLowLatencyOutputArgs(profile, { windowSegments: 3, preset: 'ultrafast' }, (name) => output.urlOf(name)).args;
        await run('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-i', input, ...args]);
        // The run's end is written once the socket's last bytes are taken.
        for (let t = 0; t < 500 && output.endedRuns < (i + 1) * plan.renditions.length; t++) await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      await output.close();
    }
    assert.deepEqual(errors, []);
    return dir;
  };

  const checkWindow = (dir: string, name: string) => {
    const text = readFileSync(join(dir, `media_${name}.m3u8`), 'utf8');
    const playlist = parse(text);
    assert.ok(playlist instanceof types.MediaPlaylist);
    assert.equal(playlist.lowLatencyCompatibility?.canBlockReload, true);
    assert.equal(playlist.lowLatencyCompatibility?.partHoldBack, Math.round(3 * LIVE_PART_TARGET_S * 100000) / 100000);
    assert.equal(playlist.partTargetDuration, LIVE_PART_TARGET_S);
    assert.equal(playlist.segments.length, 3, 'the window holds its 3 segments');
    assert.doesNotMatch(text, /PRELOAD-HINT|EXT-X-PART:/, 'no part listed and no next part announced once the run ended (a reconnect may follow)');
    const tracks = tracksOfInit(readFileSync(join(dir, `init_${name}.mp4`)));
    const onDisk = readdirSync(dir).filter((f) => f.endsWith('.m4s'));
    // A segment's parts, from its files (seg_<name>_<msn>_p<k>.m4s): each one moof + mdat.
    const partsOf = (uri: string) => {
      const stem = uri.replace(/\.m4s$/, '_p');
      return onDisk
        .filter((f) => f.startsWith(stem) && /^\d+\.m4s$/.test(f.slice(stem.length)))
        .sort((a, b) => Number(a.slice(stem.length, -4)) - Number(b.slice(stem.length, -4)))
        .map((f) => {
          const bytes = readFileSync(join(dir, f));
          return { uri: f, bytes, timing: liveFragmentTiming(bytes.subarray(8, bytes.readUInt32BE(0)), tracks) };
        });
    };
    let last: number | undefined;
    for (const segment of playlist.segments) {
      assert.ok(segment.programDateTime instanceof Date, `${segment.uri}: EXT-X-PROGRAM-DATE-TIME`);
      if (last !== undefined) assert.equal(segment.programDateTime.getTime() - last, 2000, 'program date-times follow the media time');
      last = segment.programDateTime.getTime();
      const parts = partsOf(segment.uri);
      // 2 s of 0.4 s parts (the source's last segment is 1 s).
      assert.ok(parts.length >= (segment === playlist.segments.at(-1) ? 2 : 5), `${segment.uri}: its parts were written (${parts.length})`);
      // Every part but a segment's last is at least 85 % of the part target (RFC 8216bis).
      for (const p of parts.slice(0, -1)) assert.ok((p.timing?.durationS ?? 0) >= 0.85 * LIVE_PART_TARGET_S - 0.001, `${p.uri}: ${p.timing?.durationS} s`);
      assert.deepEqual(Buffer.concat(parts.map((p) => p.bytes)), readFileSync(join(dir, segment.uri)), `${segment.uri} is its parts end to end`);
      for (const p of parts) assert.ok((p.timing?.durationS ?? 0) <= LIVE_PART_TARGET_S + 0.001, `${p.uri}: ${p.timing?.durationS} s, within the part target`);
      assert.equal(parts[0]?.timing?.independent, true, 'a segment starts with a keyframe part');
    }
    // The window keeps only the files of what its playlist lists: deleted segments take their parts with them.
    const listed = new Set(playlist.segments.map((s) => s.uri));
    assert.deepEqual(onDisk.filter((f) => !listed.has(f) && !playlist.segments.some((s) => f.startsWith(s.uri.replace(/\.m4s$/, '_p')))), []);
    // Timed as packaged segments: the first frame of each is shown at its decode time (MSE players).
    const video = tracks.find((t) => t.kind === 'video');
    assert.equal(video?.timescale, 90_000);
    for (const segment of playlist.segments) {
      const timing = fragmentTiming(readFileSync(join(dir, segment.uri))).find((t) => t.trackId === video?.id);
      assert.ok(timing && timing.firstPresentation === timing.baseDecodeTime, `${segment.uri}: shown at its decode time`);
    }
    return playlist;
  };

  test('a transcoded profile (sd-480p): an LL-HLS window of 2 s segments made of ≤ 0.5 s parts, bounded, with program date-times', async () => {
    const dir = await slice('sd-480p', join(scratch, 'sd'));
    const playlist = checkWindow(dir, '480p');
    assert.equal(playlist.targetDuration, 2);
    assert.match(readFileSync(join(dir, 'index.m3u8'), 'utf8'), /#EXT-X-STREAM-INF:BANDWIDTH=\d+\nmedia_480p\.m3u8/);
  });

  test('passthrough of a 1 s GOP (keyframes off the 0.4 s grid): no short part inside a segment, 2 s segments', async () => {
    const dir = await slice('passthrough', join(scratch, 'gop1'), 1, oneSecondGop);
    const playlist = checkWindow(dir, 'main');
    assert.deepEqual(playlist.segments.slice(0, -1).map((s) => s.duration), [2, 2]);
  });

  test('passthrough, run twice: the second run starts a new playlist numbered past the first and deletes the first run\'s files', async () => {
    const dir = await slice('passthrough', join(scratch, 'pass'), 2);
    const playlist = checkWindow(dir, 'main');
    assert.ok((playlist.mediaSequenceBase ?? 0) > 20261128040000, `numbered from the wall clock: ${playlist.mediaSequenceBase}`);
  });
});
