import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readPackagedManifest } from '../../platform/media/packaged-manifest.js';
import { FfmpegPackager, type PackagingJob } from './asset-packager.js';
import { codecsOfSegment, fragmentTiming, keyframeTimes, makeAudioOnly, makeClip, mediaToolsSkip } from '../../../test/helpers/media.js';
import { tracksOfInit } from '../../platform/media/fmp4-tracks.js';

const skip = await mediaToolsSkip();
const run = promisify(execFile);

describe('ffmpeg packager', { skip }, () => {
  let dir: string;
  let n = 0;
  const packager = new FfmpegPackager({ tools: { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' }, ladder: [180, 144], preset: 'ultrafast' });
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'playline-packager-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const jobFor = (source: string, signal = new AbortController().signal): PackagingJob & { progress: number[] } => {
    const workDir = join(dir, `work-${++n}`);
    mkdirSync(workDir);
    const progress: number[] = [];
    return { assetId: 'a'.repeat(32), source, workDir, markerFile: join(workDir, '.process.json'), signal, onProgress: (p) => progress.push(p), progress };
  };

  test('packages a clip into aligned fMP4 renditions, a poster and a manifest matching the contract', async () => {
    const source = await makeClip(dir, 'clip.mp4', { seconds: 9 });
    const job = jobFor(source);
    const outcome = await packager.package(job);
    assert.equal(outcome.kind, 'packaged', JSON.stringify(outcome));
    // Read as the playback edge reads it: the one schema, rendition names once each.
    const m = await readPackagedManifest(job.workDir);
    assert.equal(m.version, 1);
    assert.equal(m.segment_s, 4);
    assert.equal(m.poster, 'poster.jpg');
    assert.ok(Math.abs(m.duration_s - 9) < 0.1, `duration ${m.duration_s}`);
    assert.deepEqual(m.renditions.map((r) => [r.name, r.width, r.height]), [['180p', 320, 180], ['144p', 256, 144]]);
    for (const r of m.renditions) {
      assert.equal(r.playlist, `${r.name}/playlist.m3u8`);
      assert.equal(r.init, `${r.name}/init.mp4`);
      assert.match(r.codecs, /^avc1\.[0-9a-f]{6},mp4a\.40\.2$/);
      assert.ok(r.bandwidth >= r.average_bandwidth && r.average_bandwidth > 0);
      assert.deepEqual(r.segments.map((s) => s.uri), [0, 1, 2].map((i) => `${r.name}/seg_0000${i}.m4s`));
      assert.deepEqual(r.segments.map((s) => s.duration_s), [4, 4, 1]);
      for (const s of r.segments) assert.equal(readFileSync(join(job.workDir, s.uri)).length, s.bytes);
      const playlist = readFileSync(join(job.workDir, r.playlist), 'utf8');
      assert.match(playlist, /#EXT-X-MAP:URI="init\.mp4"/);
      assert.deepEqual(await codecsOfSegment(join(job.workDir, r.init), join(job.workDir, r.segments[1]?.uri ?? ''), dir), ['aac', 'h264']);
      // Each segment starts on a keyframe at the same instant in every rendition.
      const keys = await keyframeTimes(join(job.workDir, r.init), join(job.workDir, r.segments[1]?.uri ?? ''), dir);
      assert.ok(Math.abs((keys[0] ?? -1) - 4) < 0.05, `segment 1 of ${r.name} starts with a keyframe at 4 s: ${keys.join(',')}`);
    }
    assert.ok(readFileSync(join(job.workDir, 'poster.jpg')).subarray(0, 2).equals(Buffer.from([0xff, 0xd8])), 'a JPEG poster');
    assert.equal(existsSync(join(job.workDir, 'master.m3u8')), false, 'only the contract\'s files');
    assert.ok(job.progress.length > 0 && job.progress.every((p, i) => p >= 0 && p <= 99 && (i === 0 || p > (job.progress[i - 1] ?? -1))), `progress ${job.progress.join(',')}`);
  });

  test('a source without audio gets a silent AAC track; a source below every rung is not upscaled', async () => {
    const source = await makeClip(dir, 'silent.mp4', { seconds: 2, width: 160, height: 90, audio: false });
    const job = jobFor(source);
    const outcome = await packager.package(job);
    assert.ok(outcome.kind === 'packaged', JSON.stringify(outcome));
    const { renditions } = await readPackagedManifest(job.workDir);
    assert.deepEqual(renditions.map((r) => [r.name, r.width, r.height]), [['90p', 160, 90]]);
    const r = renditions[0];
    assert.ok(r);
    assert.deepEqual(await codecsOfSegment(join(job.workDir, r.init), join(job.workDir, r.segments[0]?.uri ?? ''), dir), ['aac', 'h264']);
  });

  test('at the default preset (B-frames), every segment is read alike by players that ignore the edit list (MSE, hls.js): its first frame is presented at its decode time, with the audio, and opens with SPS and PPS', async () => {
    const source = await makeClip(dir, 'bframes.mp4', { seconds: 5 });
    const job = jobFor(source);
    const outcome = await new FfmpegPackager({ tools: { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' }, ladder: [180], preset: 'veryfast' }).package(job);
    assert.equal(outcome.kind, 'packaged', JSON.stringify(outcome));
    const [r] = (await readPackagedManifest(job.workDir)).renditions;
    assert.ok(r);
    const timescales = new Map(tracksOfInit(readFileSync(join(job.workDir, r.init))).map((t) => [t.id, t.timescale]));
    for (const segment of r.segments) {
      // Seconds as stored: MSE players place each fragment by these and ignore the init segment's edit list.
      const tracks = fragmentTiming(readFileSync(join(job.workDir, segment.uri))).map((t) => {
        const scale = timescales.get(t.trackId) ?? 1;
        return { id: t.trackId, decode: t.baseDecodeTime / scale, shown: t.firstPresentation / scale };
      });
      const [video, audio] = tracks;
      assert.ok(video && audio, JSON.stringify(tracks));
      assert.equal(video.shown, video.decode, `${segment.uri}: the first frame is shown at the fragment's decode time: ${JSON.stringify(tracks)}`);
      if (segment === r.segments[0]) assert.equal(audio.shown, video.shown, `audio and video start together: ${JSON.stringify(tracks)}`);
      // The keyframe carries its parameter sets (NAL units, each after its 4-byte length).
      const joined = join(dir, `joined-${n}.mp4`);
      writeFileSync(joined, Buffer.concat([readFileSync(join(job.workDir, r.init)), readFileSync(join(job.workDir, segment.uri))]));
      const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_packets', '-show_data', '-read_intervals', '%+#1', '-of', 'json', joined]);
      const data = (JSON.parse(stdout) as { packets: Array<{ data?: string }> }).packets[0]?.data ?? '';
      const sample = Buffer.from(data.split('\n').map((line) => line.slice(10, 50).replaceAll(' ', '')).join(''), 'hex');
      const nalTypes: number[] = [];
      for (let at = 0; at + 4 < sample.length; at += 4 + sample.readUInt32BE(at)) nalTypes.push((sample[at + 4] ?? 0) & 0x1f);
      assert.ok(nalTypes.includes(7) && nalTypes.includes(8), `${segment.uri}: SPS (7) and PPS (8) in its keyframe: NAL units ${nalTypes.join(',')}`);
    }
  });

  test('not media, a playlist, audio only, or cut short: failed with a clear reason that names no server path', async () => {
    // Uploads are stored without a name extension, so the format is found from the content alone.
    const text = join(dir, 'notes');
    writeFileSync(text, 'these are not the frames you are looking for\n'.repeat(100));
    const notMedia = await packager.package(jobFor(text));
    assert.equal(notMedia.kind, 'failed');
    assert.ok(notMedia.kind === 'failed');
    assert.equal(notMedia.reason, 'Not a media file that can be read (Invalid data found when processing input)');
    assert.doesNotMatch(notMedia.reason, new RegExp(dir));

    // A playlist could make the tools read other files or the network: its format is refused.
    const playlist = join(dir, 'playlist');
    writeFileSync(playlist, '#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n');
    assert.deepEqual(await packager.package(jobFor(playlist)), { kind: 'failed', reason: 'Not a media file that can be read (its format, hls, is not an accepted media format)' });

    const audio = await packager.package(jobFor(await makeAudioOnly(dir, 'tone.m4a')));
    assert.deepEqual(audio, { kind: 'failed', reason: 'The file has no video stream (audio-only files are not supported)' });

    const whole = readFileSync(await makeClip(dir, 'whole.mp4', { seconds: 2 }));
    const cut = join(dir, 'cut.mp4');
    writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 2)));
    const truncated = await packager.package(jobFor(cut));
    assert.equal(truncated.kind, 'failed', JSON.stringify(truncated));
  });

  test('an abort stops ffmpeg and reports aborted', async () => {
    const source = await makeClip(dir, 'abort.mp4', { seconds: 4 });
    const controller = new AbortController();
    const job = jobFor(source, controller.signal);
    job.onProgress = () => controller.abort();
    const outcome = await packager.package(job);
    assert.deepEqual(outcome, { kind: 'aborted' });
    assert.equal(existsSync(join(job.workDir, 'manifest.json')), false);
  });
});
