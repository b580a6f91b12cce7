import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock.js';
import type { MediaProcessResult, ProcessRunner } from './media-process.js';
import { discoverMediaTools, mediaToolsLookup, type MediaTools } from './media-tools.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';

test('finds ffmpeg and ffprobe in PATH and reads their versions', { skip: await mediaToolsSkip() }, async () => {
  const tools = await discoverMediaTools({ ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' });
  assert.equal(tools.available, true, JSON.stringify(tools));
  if (!tools.available) return;
  assert.match(tools.ffmpegVersion, /^\S+$/);
  assert.match(tools.ffprobeVersion, /^\S+$/);
});

test('a missing tool makes the tools unavailable with the install hint, naming what is missing', async () => {
  const tools = await discoverMediaTools({ ffmpeg: 'ffmpeg', ffprobe: '/nonexistent/ffprobe' });
  assert.equal(tools.available, false);
  if (tools.available) return;
  assert.match(tools.reason, /ffprobe not found \(\/nonexistent\/ffprobe\)/);
  assert.doesNotMatch(tools.reason, /ffmpeg not found/);
  assert.match(tools.reason, /apt-get install ffmpeg/);
  assert.match(tools.reason, /PLAYLINE_FFMPEG_PATH/);
});

test('an executable that is not the tool is reported as not running', async () => {
  const tools = await discoverMediaTools({ ffmpeg: '/bin/false', ffprobe: 'ffprobe' });
  assert.equal(tools.available, false);
  if (!tools.available) assert.match(tools.reason, /ffmpeg \(\/bin\/false\) does not run/);
});

/** A fake process runner: answers by the arguments, as the real tools would, and counts the calls. */
function fakeTools(answers: { version?: () => MediaProcessResult; listings?: Record<string, string> } = {}) {
  const calls: string[] = [];
  const ok = (stdout: string): MediaProcessResult => ({ exitCode: 0, signal: null, aborted: false, spawnError: undefined, stdout, stderrTail: [] });
  const run: ProcessRunner = (command, args) => {
    calls.push(`${command} ${args.join(' ')}`);
    const flag = args.at(-1) ?? '';
    if (flag === '-version') return Promise.resolve(answers.version?.() ?? ok(`${command} version 6.1.1 Copyright`));
    return Promise.resolve(ok(answers.listings?.[flag] ?? ''));
  };
  return { run, calls };
}

const LISTINGS = {
  '-protocols': 'Supported file protocols:\nInput:\n  file\n  rtmp\n  srt\nOutput:\n  file\n  rtmp\n  srt\n',
  '-formats': 'File formats:\n D. = Demuxing supported\n .E = Muxing supported\n --\n DE hls             Apple HTTP Live Streaming\n D  mov,mp4,m4a,3gp,3g2,mj2 QuickTime / MOV\n  E mp4             MP4 (MPEG-4 Part 14)\n',
  '-encoders': 'Encoders:\n V..... = Video\n ------\n V....D libx264              libx264 H.264 / AVC\n A..... aac                  AAC (Advanced Audio Coding)\n',
};

test('capabilities: what this ffmpeg lacks of what Playline uses is named (a build without librist has no rist)', async () => {
  const fake = fakeTools({ listings: LISTINGS });
  const tools = await discoverMediaTools({ ffmpeg: 'ff', ffprobe: 'fp' }, fake.run);
  assert.equal(tools.available, true);
  if (!tools.available) return;
  assert.deepEqual(tools.missing, ['rist']);
  assert.deepEqual(fake.calls.sort(), ['ff -hide_banner -encoders', 'ff -hide_banner -formats', 'ff -hide_banner -protocols', 'ff -hide_banner -version', 'fp -hide_banner -version']);
});

test('the real ffmpeg lists what the packager needs (hls, mp4, libx264, aac)', { skip: await mediaToolsSkip() }, async () => {
  const tools = await discoverMediaTools({ ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' });
  assert.equal(tools.available, true);
  if (!tools.available) return;
  assert.ok(tools.missing !== undefined, 'the listings were read');
  for (const needed of ['hls', 'mp4', 'libx264', 'aac'] as const) assert.ok(!tools.missing.includes(needed), `${needed} missing: ${tools.missing.join(', ')}`);
});

test('a look that fails (a probe stopped by its bound on a loaded machine) is repeated in the background until the tools are found', async () => {
  const clock = new FakeClock();
  let slow = true;
  const fake = fakeTools({
    listings: LISTINGS,
    version: () => (slow ? { exitCode: null, signal: 'SIGTERM', aborted: true, spawnError: undefined, stdout: '', stderrTail: [] } : { exitCode: 0, signal: null, aborted: false, spawnError: undefined, stdout: 'ffmpeg version 6.1.1', stderrTail: [] }),
  });
  const warnings: string[] = [];
  const log = { info: () => undefined, warn: (_obj: object, msg: string) => void warnings.push(msg) };
  const lookup = mediaToolsLookup({ paths: { ffmpeg: 'ff', ffprobe: 'fp' }, discover: (paths) => discoverMediaTools(paths, fake.run), log, clock, retryMs: 1_000, maxRetryMs: 4_000 });
  const foundLater: MediaTools[] = [];
  lookup.onFound((tools) => foundLater.push(tools));
  await lookup.work.start();
  const first = lookup.found();
  assert.equal(first?.available, false);
  if (first?.available === false) assert.match(first.reason, /did not answer -version within \d+ s \(looked for again in the background\)/);
  assert.match(warnings.join('\n'), /looking again in the background/);
  // Still slow at the next look: the wait doubles (1 s, then 2 s), the answer stays "not found".
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  clock.advance(1_000);
  await settle();
  assert.equal(lookup.found()?.available, false);
  assert.equal(clock.pendingTimers(), 1);
  slow = false;
  clock.advance(1_999);
  await settle();
  assert.equal(foundLater.length, 0, 'not before the doubled wait');
  clock.advance(1);
  await settle();
  await settle();
  assert.equal(lookup.found()?.available, true);
  assert.equal(foundLater.length, 1, 'the modules are told once');
  assert.equal(clock.pendingTimers(), 0, 'found: no more looks');
  await lookup.work.stop();
});

test('stopping the runtime ends the looks again', async () => {
  const clock = new FakeClock();
  const fake = fakeTools({ version: () => ({ exitCode: null, signal: null, aborted: false, spawnError: Object.assign(new Error('spawn ff ENOENT'), { code: 'ENOENT' }), stdout: '', stderrTail: [] }) });
  const lookup = mediaToolsLookup({ paths: { ffmpeg: 'ff', ffprobe: 'fp' }, discover: (paths) => discoverMediaTools(paths, fake.run), log: { info: () => undefined, warn: () => undefined }, clock });
  await lookup.work.start();
  assert.equal(clock.pendingTimers(), 1);
  await lookup.work.stop();
  assert.equal(clock.pendingTimers(), 0);
});
