import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createLogger } from '../../platform/logger.js';
import { Registry } from 'prom-client';
import { FakeClock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { MediaProcessOptions, MediaProcessResult } from '../../platform/media/media-process.js';
import { livePlaylistPath } from '../../platform/media/media-layout.js';
import { createOutbound } from '../../platform/net/outbound.js';
import { parseCallbackAllowList } from '../../platform/net/callback-allowlist.js';
import { FfmpegPublisher, type PushReport } from './ffmpeg-publisher.js';
import type { PublishJob } from './publisher.js';
import type { TargetCreateBody } from './syndication.schema.js';

/** A stand-in for ffmpeg: each run waits for the test to feed it progress or end it. */
interface FakeRun {
  args: readonly string[];
  progress(outTimeUs: number): void;
  exit(stderr: string): void;
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('FfmpegPublisher supervision (fake clock, fake ffmpeg)', () => {
  let mediaRoot: string;
  const runs: FakeRun[] = [];
  const reports: PushReport[] = [];
  const clock = new FakeClock();
  const registry = new Registry();
  const run = (_command: string, args: readonly string[], options: MediaProcessOptions = {}): Promise<MediaProcessResult> =>
    new Promise((resolve) => {
      const end = (stderr: string, aborted: boolean) => resolve({ exitCode: aborted ? null : 1, signal: aborted ? 'SIGTERM' : null, aborted, spawnError: undefined, stdout: '', stderrTail: stderr ? [stderr] : [] });
      options.signal?.addEventListener('abort', () => end('', true), { once: true });
      runs.push({
        args,
        progress: (us) => {
          options.onStdoutLine?.(`out_time_us=${us}`);
          options.onStdoutLine?.('progress=continue');
        },
        exit: (stderr) => end(stderr, false),
      });
    });
  let publisher: FfmpegPublisher;
  let wantedNow = true;
  const target: TargetCreateBody = { platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://127.0.0.1:9000' };
  const job = (scheduleId: string, contentId = 'slicer-1', t: TargetCreateBody = target): PublishJob => ({
    workspaceId: 'ws1', scheduleId, targetId: 't1', target: t, contentId, contentType: 'e', region: 'us-west-2', scte35Enabled: false, sourceUrlParams: '', pullUrl: null,
  });
  const lastRun = () => {
    const latest = runs.at(-1);
    assert.ok(latest, 'ffmpeg ran');
    return latest;
  };
  const until = async (what: () => boolean) => {
    for (let i = 0; i < 200 && !what(); i++) await flush();
    assert.ok(what());
  };

  before(async () => {
    mediaRoot = await mkdtemp(join(tmpdir(), 'playline-publisher-'));
    const playlist = livePlaylistPath(mediaRoot, 'ws1', 'slicer-1');
    mkdirSync(dirname(playlist), { recursive: true });
    writeFileSync(playlist, '#EXTM3U\n');
    publisher = new FfmpegPublisher({
      ffmpeg: () => 'ffmpeg',
      mediaRoot,
      clock,
      log: createLogger({ level: 'silent' }),
      // Destinations resolve to loopback, which the allow-list admits (as PLAYLINE_OUTBOUND_ALLOWLIST would).
      outbound: createOutbound({ resolver: { resolve: async () => [{ address: '127.0.0.1', family: 4 }] }, allowList: parseCallbackAllowList('127.0.0.1/32') }),
      ingest: {},
      report: (r) => void reports.push(r),
      wanted: async () => wantedNow,
      recheckMs: 5_000,
      registry,
      run,
      stallMs: 10_000,
      restart: { backoff: { initialMs: 1000, maxMs: 8000 }, killGraceMs: 2000 },
    });
  });
  after(async () => {
    await publisher.stopAll();
    await rm(mediaRoot, { recursive: true, force: true });
  });

  test('active once frames flow; a failure is reported and retried with doubling backoff; a retry that flows reports active', async () => {
    const started = publisher.start(job('s1'));
    await until(() => runs.length === 1);
    const [format, muxer, output] = lastRun().args.slice(-3);
    assert.deepEqual([format, muxer], ['-f', 'mpegts']);
    assert.match(output ?? '', /^srt:\/\/127\.0\.0\.1:\d+$/, 'ffmpeg sends to the loopback relay');
    assert.notEqual(output, 'srt://127.0.0.1:9000');
    lastRun().progress(0);
    lastRun().progress(400_000);
    assert.deepEqual(await started, { ok: true });
    assert.deepEqual(reports.splice(0), [{ workspaceId: 'ws1', scheduleId: 's1', state: 'active' }]);

    lastRun().exit('Connection to srt://127.0.0.1:9000 failed: Input/output error');
    await until(() => reports.length === 1);
    assert.equal(reports[0]?.state, 'error');
    // The target_stream is a secret: a reason that quotes it is masked.
    assert.equal(reports[0]?.state === 'error' ? reports[0].reason : '', 'ffmpeg ended: Connection to ******** failed: Input/output error');

    // Backoff: 1 s, then 2 s, then 4 s between failing attempts.
    for (const wait of [1000, 2000, 4000]) {
      const before = runs.length;
      clock.advance(wait - 1);
      await flush();
      assert.equal(runs.length, before, `no attempt before ${wait} ms`);
      clock.advance(1);
      await until(() => runs.length === before + 1);
      reports.length = 0;
      lastRun().exit('refused');
      await until(() => reports.length === 1);
      assert.equal(reports[0]?.state, 'error');
    }
    clock.advance(8000);
    await until(() => runs.length === 5);
    reports.length = 0;
    lastRun().progress(200_000);
    await until(() => reports.length === 1);
    assert.deepEqual(reports.splice(0), [{ workspaceId: 'ws1', scheduleId: 's1', state: 'active' }]);
    assert.equal(publisher.stateOf('s1'), 'active');
    assert.match(await registry.metrics(), /playline_syndication_push_restarts_total 4/);
    assert.match(await registry.metrics(), /playline_syndication_pushes\{state="active"\} 1/);

    await publisher.stop(job('s1'));
    assert.equal(publisher.stateOf('s1'), undefined);
    const count = runs.length;
    clock.advance(60_000);
    await flush();
    assert.equal(runs.length, count, 'a stopped push never runs again');
  });

  test('a destination that never takes the stream, or stops taking it, is cut after the stall time', async () => {
    reports.length = 0;
    const count = runs.length;
    const started = publisher.start(job('s2'));
    await until(() => runs.length === count + 1);
    clock.advance(10_000);
    const outcome = await started;
    assert.deepEqual(outcome, { ok: false, reason: 'the destination did not accept the stream within 10 s' });
    clock.advance(1000);
    await until(() => runs.length === count + 2);
    lastRun().progress(100_000);
    await until(() => publisher.stateOf('s2') === 'active');
    reports.length = 0;
    clock.advance(10_000);
    await until(() => reports.length === 1);
    assert.deepEqual(reports[0], { workspaceId: 'ws1', scheduleId: 's2', state: 'error', reason: 'the destination stopped taking the stream (no progress for 10 s)' });
    await publisher.stop(job('s2'));
  });

  test('a push whose schedule was deleted or stopped elsewhere ends at its next retry instead of pushing on', async () => {
    const count = runs.length;
    const started = publisher.start(job('s5'));
    await until(() => runs.length === count + 1);
    lastRun().exit('refused');
    assert.equal((await started).ok, false);
    wantedNow = false;
    clock.advance(1000);
    await until(() => publisher.stateOf('s5') === undefined);
    clock.advance(60_000);
    await flush();
    assert.equal(runs.length, count + 1, 'no further attempt');
    wantedNow = true;
  });

  test('a running push whose schedule was stopped by another instance ends at the next check', async () => {
    const count = runs.length;
    const started = publisher.start(job('s6'));
    await until(() => runs.length === count + 1);
    lastRun().progress(300_000);
    assert.deepEqual(await started, { ok: true });
    wantedNow = false;
    reports.length = 0;
    clock.advance(5_000);
    await until(() => publisher.stateOf('s6') === undefined);
    assert.deepEqual(reports, [], 'ended quietly: no error, the schedule is already stopped');
    clock.advance(60_000);
    await flush();
    assert.equal(runs.length, count + 1, 'the push ended and did not come back');
    wantedNow = true;
  });

  test('content without a live window, zixi and integrated targets are refused before anything runs', async () => {
    const count = runs.length;
    await assert.rejects(publisher.start(job('s3', 'not-live')), (err: unknown) => err instanceof AppError && err.code === 'content_not_live');
    await assert.rejects(
      publisher.start(job('s4', 'slicer-1', { platform: 'YouTube', target_protocol: 'rtmp', platform_config: { integrated: true } })),
      (err: unknown) => err instanceof AppError && err.code === 'publishing_unavailable' && /OAuth/.test(err.detail),
    );
    assert.equal(runs.length, count);
  });
  test('a destination the outbound guard refuses ends the push in error at once, without retrying (it retried forever)', async () => {
    const refusedReports: PushReport[] = [];
    const guarded = new FfmpegPublisher({
      ffmpeg: () => 'ffmpeg',
      mediaRoot,
      clock,
      log: createLogger({ level: 'silent' }),
      // No allow-list, as in production: a loopback destination is refused.
      outbound: createOutbound(),
      ingest: {},
      report: (r) => void refusedReports.push(r),
      run,
      stallMs: 10_000,
      restart: { backoff: { initialMs: 1000, maxMs: 8000 }, killGraceMs: 2000 },
    });
    const count = runs.length;
    const outcome = await guarded.start(job('s7'));
    assert.equal(outcome.ok, false);
    assert.match(outcome.ok ? '' : outcome.reason, /not allowed to connect to 127\.0\.0\.1:9000: 127\.0\.0\.1 is a loopback address; not retried/);
    await until(() => guarded.stateOf('s7') === undefined);
    clock.advance(120_000);
    await flush();
    assert.equal(runs.length, count, 'ffmpeg never ran');
    assert.deepEqual(refusedReports.map((r) => r.state), ['error'], 'one error, no retry');
  });
});
