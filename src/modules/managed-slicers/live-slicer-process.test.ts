import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import { FakeProcessRunner, settle } from '../../platform/media/fake-process-runner.test-support.js';
import { LiveSlicerProcess } from './live-slicer-process.js';
import { liveEventOf, type LiveState } from './live-status.js';

const slicerProcess = (clock: FakeClock, runs: FakeProcessRunner, restarts: { n: number }) =>
  new LiveSlicerProcess({
    command: 'ffmpeg',
    before: [],
    input: async () => ({ args: [] }),
    after: [],
    run: runs.run,
    clock,
    restart: { backoff: { initialMs: 1000, maxMs: 4000 }, killGraceMs: 3000 },
    stallMs: 10_000,
    onRestart: () => restarts.n++,
  });

describe('LiveSlicerProcess', () => {
  test('media in the progress output makes it live with the input bitrate; a source that stalls or goes away is listened for again at once', async () => {
    const clock = new FakeClock();
    const runs = new FakeProcessRunner();
    const restarts = { n: 0 };
    const p = slicerProcess(clock, runs, restarts);
    assert.equal(p.snapshot().state, 'provisioning');
    p.start();
    await settle();
    assert.equal(p.snapshot().state, 'waiting_for_source');
    clock.advance(60_000);
    assert.deepEqual([p.snapshot().state, runs.last().aborted], ['waiting_for_source', false], 'no source yet: it waits as long as it takes');
    runs.last().progress({ totalSize: 0, outTimeUs: 0 });
    assert.equal(p.snapshot().state, 'waiting_for_source', 'no media yet');
    runs.last().progress({ totalSize: 125_000, outTimeUs: 1_000_000 });
    runs.last().progress({ totalSize: 250_000, outTimeUs: 2_000_000 });
    const live = p.snapshot();
    assert.equal(live.state, 'live');
    assert.equal(live.inputKbps, 1000, '125,000 bytes in a second');
    assert.equal(live.lastFrameAt, clock.now());
    const lastFrameAt = clock.now();
    clock.advance(9_999);
    assert.equal(runs.last().aborted, false, 'not before 10 s without media');
    clock.advance(1);
    assert.deepEqual([p.snapshot().state, p.snapshot().inputKbps], ['waiting_for_source', null], 'no media for 10 s: the source stalled');
    assert.equal(runs.last().aborted, true, 'the stalled process is ended (it would hold the only connection)');
    await settle();
    assert.equal(runs.runs.length, 2, 'and listens again without waiting');
    assert.deepEqual(
      { state: p.snapshot().state, reason: p.snapshot().failureReason, restarts: restarts.n, lastFrameAt: p.snapshot().lastFrameAt },
      { state: 'waiting_for_source', reason: null, restarts: 1, lastFrameAt },
    );
    runs.last().progress({ totalSize: 375_000, outTimeUs: 3_000_000 });
    assert.equal(p.snapshot().state, 'live', 'media again');

    runs.last().exit({ exitCode: 1, stderrTail: ['srt: Input/output error'] });
    await settle();
    assert.equal(runs.runs.length, 3, 'started again without waiting');
    assert.equal(restarts.n, 2);
    assert.deepEqual({ state: p.snapshot().state, reason: p.snapshot().failureReason, kbps: p.snapshot().inputKbps }, { state: 'waiting_for_source', reason: null, kbps: null });
    await p.stop();
    assert.equal(p.snapshot().state, 'stopped');
    assert.equal(runs.runs.length, 3);
  });

  test('each advance of the output is passed on (the live window\'s index keeper runs then)', async () => {
    const clock = new FakeClock();
    const runs = new FakeProcessRunner();
    let advanced = 0;
    const p = new LiveSlicerProcess({
      command: 'ffmpeg', before: [], input: async () => ({ args: [] }), after: [], run: runs.run, clock,
      restart: { backoff: { initialMs: 1000, maxMs: 4000 }, killGraceMs: 3000 }, stallMs: 10_000,
      onProgress: () => advanced++,
    });
    p.start();
    await settle();
    runs.last().progress({ totalSize: 0, outTimeUs: 0 });
    assert.equal(advanced, 0, 'no output yet');
    runs.last().progress({ totalSize: 125_000, outTimeUs: 1_000_000 });
    runs.last().progress({ totalSize: 125_000, outTimeUs: 1_000_000 });
    runs.last().progress({ totalSize: 250_000, outTimeUs: 2_000_000 });
    assert.equal(advanced, 2);
    await p.stop();
  });

  test('a process that ends without media is started again after a backoff that doubles up to its cap, with the reason shown meanwhile', async () => {
    const clock = new FakeClock();
    const runs = new FakeProcessRunner();
    const restarts = { n: 0 };
    const p = slicerProcess(clock, runs, restarts);
    p.start();
    await settle();
    const crash = async (n: number) => {
      runs.runs[n]?.exit({ exitCode: 1, stderrTail: ['Connection to tcp://0.0.0.0:1935 failed: Address already in use'] });
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
    runs.last().progress({ totalSize: 1000, outTimeUs: 40_000 });
    assert.equal(p.snapshot().state, 'live');
    assert.equal(p.snapshot().failureReason, null, 'media clears the reason');
    assert.deepEqual(runs.runs.map((r) => r.options.killGraceMs), [3000, 3000, 3000, 3000, 3000]);
    await p.stop();
  });

  test('stop during a backoff ends the supervision without starting the process again', async () => {
    const clock = new FakeClock();
    const runs = new FakeProcessRunner();
    const p = slicerProcess(clock, runs, { n: 0 });
    p.start();
    await settle();
    runs.runs[0]?.exit({ exitCode: 1 });
    await settle();
    await p.stop();
    clock.advance(60_000);
    await settle();
    assert.equal(runs.runs.length, 1);
    assert.equal(p.snapshot().state, 'stopped');
  });

  test('each run waits for its source first (hls push, the next RTMP publisher), told whether a run ended before, and releases its input after the run', async () => {
    const clock = new FakeClock();
    const runs = new FakeProcessRunner();
    const asked: boolean[] = [];
    let sourceReady: () => void = () => undefined;
    let closed = 0;
    const p = new LiveSlicerProcess({
      command: 'ffmpeg',
      before: ['-nostdin'],
      after: ['out.m3u8'],
      run: runs.run,
      clock,
      restart: { backoff: { initialMs: 1000, maxMs: 4000 }, killGraceMs: 3000 },
      stallMs: 10_000,
      input: (signal, again) => {
        asked.push(again);
        return new Promise((resolve) => {
          const input = { args: ['-i', 'index.m3u8'], close: async () => void closed++ };
          sourceReady = () => resolve(input);
          signal.addEventListener('abort', () => resolve(input), { once: true });
        });
      },
    });
    p.start();
    await settle();
    assert.deepEqual([runs.runs.length, p.snapshot().state], [0, 'waiting_for_source']);
    sourceReady();
    await settle();
    assert.equal(runs.runs.length, 1);
    assert.deepEqual(runs.last().args, ['-nostdin', '-i', 'index.m3u8', 'out.m3u8']);
    runs.last().progress({ totalSize: 1000, outTimeUs: 40_000 });
    clock.advance(10_000);
    await settle();
    assert.deepEqual([asked, runs.runs.length], [[false, true], 1], 'the next run waits for a playlist written anew');
    assert.equal(closed, 1, 'the ended run released its input');
    await p.stop();
    assert.equal(runs.runs.length, 1, 'stopped while waiting: nothing spawned');
  });

  test('live state changes are reported (live.started, live.ended): to live once media arrives, away from it on a stall and on stop', async () => {
    const clock = new FakeClock();
    const runs = new FakeProcessRunner();
    const changes: string[] = [];
    const p = new LiveSlicerProcess({
      command: 'ffmpeg', before: [], input: async () => ({ args: [] }), after: [], run: runs.run, clock,
      restart: { backoff: { initialMs: 1000, maxMs: 4000 }, killGraceMs: 3000 }, stallMs: 10_000,
      onLiveStateChange: (state, previous) => changes.push(`${previous}>${state}`),
    });
    p.start();
    await settle();
    runs.last().progress({ totalSize: 0, outTimeUs: 0 });
    runs.last().progress({ totalSize: 125_000, outTimeUs: 1_000_000 });
    runs.last().progress({ totalSize: 250_000, outTimeUs: 2_000_000 });
    assert.deepEqual(changes, ['provisioning>waiting_for_source', 'waiting_for_source>live'], 'live once, however many progress reports');
    clock.advance(10_000);
    await settle();
    assert.deepEqual(changes.slice(2), ['live>waiting_for_source'], 'the source stalled: away from live');
    runs.last().progress({ totalSize: 375_000, outTimeUs: 3_000_000 });
    assert.deepEqual(changes.slice(3), ['waiting_for_source>live']);
    await p.stop();
    assert.deepEqual(changes.slice(4), ['live>stopped']);
  });

  test('encoder drop-out: reconnecting within the grace (back live: the same event), waiting_for_source past it', async () => {
    const clock = new FakeClock();
    const runs = new FakeProcessRunner();
    const changes: string[] = [];
    const p = new LiveSlicerProcess({
      command: 'ffmpeg', before: [], input: async () => ({ args: [] }), after: [], run: runs.run, clock,
      restart: { backoff: { initialMs: 1000, maxMs: 4000 }, killGraceMs: 3000 }, stallMs: 10_000, reconnectGraceMs: 30_000,
      onLiveStateChange: (state, previous) => changes.push(`${previous}>${state}`),
    });
    p.start();
    await settle();
    runs.last().progress({ totalSize: 0, outTimeUs: 0 });
    runs.last().progress({ totalSize: 125_000, outTimeUs: 1_000_000 });
    // The encoder drops: its connection ends, ffmpeg exits.
    runs.last().exit({ exitCode: 1, stderrTail: ['srt: Connection lost'] });
    await settle();
    assert.equal(p.snapshot().state, 'reconnecting');
    clock.advance(3000);
    runs.last().progress({ totalSize: 0, outTimeUs: 0 });
    runs.last().progress({ totalSize: 125_000, outTimeUs: 1_000_000 });
    assert.equal(p.snapshot().state, 'live');
    assert.deepEqual(changes, ['provisioning>waiting_for_source', 'waiting_for_source>live', 'live>reconnecting', 'reconnecting>live']);
    runs.last().exit({ exitCode: 1, stderrTail: ['srt: Connection lost'] });
    await settle();
    clock.advance(29_999);
    assert.equal(p.snapshot().state, 'reconnecting');
    clock.advance(1);
    assert.equal(p.snapshot().state, 'waiting_for_source', 'past the grace: the event ended');
    assert.deepEqual(changes.slice(4), ['live>reconnecting', 'reconnecting>waiting_for_source']);
    await p.stop();
    assert.deepEqual(changes.slice(6), ['waiting_for_source>stopped']);
    // The webhooks follow the event: one live.started, one live.ended (past the grace), none for the drop-out that came back.
    const events = changes.map((c) => liveEventOf(...(c.split('>').reverse() as [LiveState, LiveState]))).filter((e) => e !== undefined);
    assert.deepEqual(events, ['live.started', 'live.ended']);
    assert.equal(liveEventOf('stopped', 'reconnecting'), 'live.ended', 'stopped during the grace: the event ends');
  });
});
