import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { encodeOnce, firstVideoNalTypes, fragmentTiming, mediaToolsSkip } from '../../../test/helpers/media.js';
import { tracksOfInit } from '../../platform/media/fmp4-tracks.js';
import { parseMediaPlaylist } from '../../platform/media/hls-media-playlist.js';
import { liveOutputArgs } from './live-profiles.test-support.js';
import type { OutputProfile } from './managed-slicers.schema.js';

const skip = await mediaToolsSkip();
const run = promisify(execFile);

/**
 * A live window's fMP4 segments read alike by every player (as packaged ones are, see
 * src/platform/media/fmp4-for-players.ts): MSE players (hls.js) ignore the init segment's edit
 * list, so each segment's first frame must be presented at its fragment's decode time, or they
 * show the video a frame or two late. The slicer's ffmpeg output arguments, run here on a few
 * seconds of a source with B-frames (x264 at the slicers' `veryfast`, as an encoder sends it).
 */
describe('live profiles: segments timed as players read them (real ffmpeg)', { skip }, () => {
  let scratch: string;
  let source: string;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-live-profiles-'));
    // MPEG-TS, as SRT, RIST and hls push bring it; `veryfast` gives x264 its B-frames.
    source = await encodeOnce(['-hide_banner', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25:duration=5', '-f', 'lavfi', '-i', 'sine=sample_rate=48000:duration=5',
      '-c:v', 'libx264', '-preset', 'veryfast', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '64k'], join(scratch, 'source.ts'));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  /** Runs the slicer's output arguments of `profile` on the source into a fresh window; returns the window's directory. */
  const slice = async (profile: OutputProfile): Promise<string> => {
    const dir = join(scratch, profile);
    mkdirSync(dir);
    await run('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-i', source, ...liveOutputArgs(profile, { windowSegments: 10, preset: 'veryfast' })], { cwd: dir });
    return dir;
  };

  const assertShownAtDecodeTime = (dir: string, playlist: string) => {
    const media = parseMediaPlaylist(readFileSync(join(dir, playlist), 'utf8'));
    assert.ok(media.init !== undefined && media.segments.length >= 2, `${playlist}: ${JSON.stringify(media)}`);
    const tracks = tracksOfInit(readFileSync(join(dir, media.init)));
    const video = tracks.find((t) => t.kind === 'video');
    const audio = tracks.find((t) => t.kind === 'audio');
    assert.ok(video && audio, JSON.stringify(tracks));
    for (const segment of media.segments) {
      const timing = new Map(fragmentTiming(readFileSync(join(dir, segment.uri))).map((t) => [t.trackId, t]));
      const v = timing.get(video.id);
      assert.ok(v, `${segment.uri}: a video fragment`);
      const shown: number = v.firstPresentation / video.timescale;
      const decode: number = v.baseDecodeTime / video.timescale;
      assert.equal(shown, decode, `${playlist} ${segment.uri}: the first frame is shown at the fragment's decode time (shown ${shown}, decode ${decode})`);
      if (segment === media.segments[0]) {
        const a = timing.get(audio.id);
        assert.ok(a, `${segment.uri}: an audio fragment`);
        assert.ok(Math.abs(a.firstPresentation / audio.timescale - shown) < 0.05, `${segment.uri}: audio starts with the video (audio ${a.firstPresentation / audio.timescale}, video ${shown})`);
      }
    }
  };

  test('a transcoded profile (sd-480p): every segment\'s first frame is shown at its decode time, the audio with it, in a 90 kHz video track; each keyframe holds SPS and PPS', async () => {
    const dir = await slice('sd-480p');
    assertShownAtDecodeTime(dir, 'media_480p.m3u8');
    const video = tracksOfInit(readFileSync(join(dir, 'init.mp4'))).find((t) => t.kind === 'video');
    assert.equal(video?.timescale, 90_000);
    const segments = readdirSync(dir).filter((f) => f.endsWith('.m4s'));
    assert.ok(segments.length >= 2, segments.join(','));
    for (const segment of segments) {
      const types = await firstVideoNalTypes(join(dir, 'init.mp4'), join(dir, segment), scratch);
      assert.ok(types.includes(7) && types.includes(8), `${segment}: SPS (7) and PPS (8) in its keyframe: NAL units ${types.join(',')}`);
    }
  });

  test('passthrough of a source with B-frames (stream copy): the same', async () => {
    const dir = await slice('passthrough');
    assertShownAtDecodeTime(dir, 'media_main.m3u8');
  });
});
