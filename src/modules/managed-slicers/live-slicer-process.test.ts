import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import type { MediaProcessOptions, MediaProcessResult } from '../../platform/media/media-process.js';
import { LiveSlicerProcess } from './live-slicer-process.js';

/** A fake ffmpeg: each run waits until the test ends it, after feeding it progress lines. */
class FakeRuns {
  readonly runs: Array<{ options: MediaProcessOptions; end: (result: Partial<MediaProcessResult>) => void }> = [];

  run = (_command: string, _args: readonly string[], options: MediaProcessOptions): Promise<MediaProcessResult> =>
    new Promise((resolve) => {
      const end = (result: Partial<MediaProcessResult>) =>
        resolve({ exitCode: 1, signal: null, aborted: false, spawnError: undefined, stdout: '', stderrTail: [], ...result });
      options.signal?.addEventListener('abort', () => end({ exitCode: null, signal: 'SIGTERM', aborted: true }), { once: true });
      options.onSpawn?.(1000 + this.runs.length);
      this.runs.push({ options, end });
    });

  progress(n: number, block: { totalSize: number; outTimeUs: number }): void {
    const feed = this.runs[n]?.options.onStdoutLine;
    assert.ok(feed);
    for (const line of [`total_size=${block.totalSize}`, `out_time_us=${block.outTimeUs}`, 'progress=continue']) feed(line);
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

const slicerProcess = (clock: FakeClock, runs: FakeRuns, restarts: { n: number }) =>
  new LiveSlicerProcess({ command: 'ffmpeg', args: [], run: runs.run, clock, backoffMs: 1000, maxBackoffMs: 4000, onRestart: () => restarts.n++ });

describe('LiveSlicerProcess', () => {
  test('media in the progress output makes it live with the input bitrate; a source that goes away is listened for again at once', async () => {
    const clock = new FakeClock();
    const runs = new FakeRuns();
    const restarts = { n: 0 };
    const p = slicerProcess(clock, runs, restarts);
    p.start();
    await settle();
    assert.equal(p.snapshot().state, 'waiting_for_source');
    runs.progress(0, { totalSize: 0, outTimeUs: 0 });
    assert.equal(p.snapshot().state, 'waiting_for_source', 'no media yet');
    runs.progress(0, { totalSize: 125_000, outTimeUs: 1_000_000 });
    runs.progress(0, { totalSize: 250_000, outTimeUs: 2_000_000 });
    const live = p.snapshot();
    assert.equal(live.state, 'live');
    assert.equal(live.inputKbps, 1000, '125,000 bytes in a second');
    assert.equal(live.lastFrameAt, clock.now());
    clock.advance(10_001);
    assert.deepEqual([p.snapshot().state, p.snapshot().inputKbps], ['waiting_for_source', null], 'no media for 10 s: the source stalled');
    runs.progress(0, { totalSize: 375_000, outTimeUs: 3_000_000 });
    assert.equal(p.snapshot().state, 'live', 'media again');

    runs.runs[0]?.end({ exitCode: 1, stderrTail: ['srt: Input/output error'] });
    await settle();
    await settle();
    assert.equal(runs.runs.length, 2, 'started again without waiting');
    assert.equal(restarts.n, 1);
    assert.deepEqual({ state: p.snapshot().state, reason: p.snapshot().failureReason, kbps: p.snapshot().inputKbps }, { state: 'waiting_for_source', reason: null, kbps: null });
    await p.stop();
    assert.equal(p.snapshot().state, 'stopped');
    assert.equal(runs.runs.length, 2);
  });

  test('a process that ends without media is started again after a backoff that doubles up to its cap, with the reason shown meanwhile', async () => {
    const clock = new FakeClock();
    const runs = new FakeRuns();
    const restarts = { n: 0 };
    const p = slicerProcess(clock, runs, restarts);
    p.start();
    await settle();
    const crash = async (n: number) => {
      runs.runs[n]?.end({ exitCode: 1, stderrTail: ['Connection to tcp://0.0.0.0:1935 failed: Address already in use'] });
      await settle();
      await settle();
    };
    await crash(0);
    assert.equal(p.snapshot().state, 'restarting');
    assert.match(p.snapshot().failureReason ?? '', /Address already in use/);
    clock.advance(999);
    await settle();
    assert.equal(runs.runs.length, 1, 'not before the first backoff (1 s)');
    clock.advance(1);
    await settle();
    assert.equal(runs.runs.length, 2);
    await crash(1);
    clock.advance(1999);
    await settle();
    assert.equal(runs.runs.length, 2, 'the second backoff is 2 s');
    clock.advance(1);
    await settle();
    assert.equal(runs.runs.length, 3);
    await crash(2);
    clock.advance(4000);
    await settle();
    assert.equal(runs.runs.length, 4, '4 s');
    await crash(3);
    clock.advance(3999);
    await settle();
    assert.equal(runs.runs.length, 4, 'capped at 4 s, not 8 s');
    clock.advance(1);
    await settle();
    assert.equal(runs.runs.length, 5);
    assert.equal(restarts.n, 4);
    runs.progress(4, { totalSize: 1000, outTimeUs: 40_000 });
    assert.equal(p.snapshot().state, 'live');
    assert.equal(p.snapshot().failureReason, null, 'media clears the reason');
    await p.stop();
  });

  test('stop during a backoff ends the supervision without starting the process again', async () => {
    const clock = new FakeClock();
    const runs = new FakeRuns();
    const p = slicerProcess(clock, runs, { n: 0 });
    p.start();
    await settle();
    runs.runs[0]?.end({ exitCode: 1 });
    await settle();
    await p.stop();
    clock.advance(60_000);
    await settle();
    assert.equal(runs.runs.length, 1);
    assert.equal(p.snapshot().state, 'stopped');
  });
});
