import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brief, FakeProcessRunner, settle, supervised } from './fake-process-runner.test-support.js';
import type { EndRun, ProcessLaunch } from './supervised-process.js';

describe('SupervisedProcess', () => {
  test('a failing process is started again after a backoff that doubles up to its cap; a run with progress resets it', async () => {
    const { clock, runner, supervisor } = supervised({ policy: { firstProgressDeadline: false } });
    supervisor.start();
    await settle();
    assert.equal(runner.runs.length, 1);
    for (const [i, wait] of [1000, 2000, 4000, 4000].entries()) {
      runner.last().exit({ stderrTail: [`crash ${i}`] });
      await settle();
      assert.equal(supervisor.state, 'backoff');
      clock.advance(wait - 1);
      await settle();
      assert.equal(runner.runs.length, i + 1, `no start before ${wait} ms`);
      clock.advance(1);
      await settle();
      assert.equal(runner.runs.length, i + 2, `started again at ${wait} ms`);
    }
    runner.last().progress({ outTimeUs: 1_000_000 });
    runner.last().exit({ stderrTail: ['the destination went away'] });
    await settle();
    clock.advance(999);
    await settle();
    assert.equal(runner.runs.length, 5);
    clock.advance(1);
    await settle();
    assert.equal(runner.runs.length, 6, 'after a run that made progress the first wait applies again');
    await supervisor.stop();
  });

  test('the stall rule ends a run at exactly stallMs without new output, not before; each advance of the output gives it stallMs again', async () => {
    const { clock, runner, supervisor, ends } = supervised();
    supervisor.start();
    await settle();
    clock.advance(9_999);
    await settle();
    assert.deepEqual([runner.last().aborted, supervisor.state], [false, 'starting']);
    clock.advance(1);
    assert.deepEqual([runner.last().aborted, supervisor.state], [true, 'ending'], 'first-progress deadline: ended at 10 s');
    await settle();
    assert.deepEqual(brief(ends[0]), { cause: 'stalled', reason: 'no progress within 10 s of the start', failure: true, progressed: false });
    assert.equal(supervisor.status().lastFailure, 'no progress within 10 s of the start');

    clock.advance(1000);
    await settle();
    assert.equal(runner.runs.length, 2);
    runner.last().progress({ outTimeUs: 500_000 });
    clock.advance(9_999);
    runner.last().progress({ outTimeUs: 1_000_000 });
    clock.advance(9_999);
    assert.equal(runner.last().aborted, false, 'new output re-armed the rule');
    runner.last().progress({ outTimeUs: 1_000_000 });
    clock.advance(1);
    assert.equal(runner.last().aborted, true, 'a block without new output is no progress');
    await settle();
    assert.deepEqual(brief(ends[1]), { cause: 'stalled', reason: 'no progress for 10 s', failure: true, progressed: true });
    await supervisor.stop();
  });

  test('without the first-progress deadline a run waits for output as long as it takes; once output flowed the stall rule applies', async () => {
    const { clock, runner, supervisor } = supervised({ policy: { firstProgressDeadline: false } });
    supervisor.start();
    await settle();
    clock.advance(3_600_000);
    await settle();
    assert.deepEqual([runner.runs.length, runner.last().aborted, supervisor.state, clock.pendingTimers()], [1, false, 'starting', 0]);
    runner.last().progress({ outTimeUs: 40_000 });
    assert.equal(supervisor.state, 'running');
    clock.advance(10_000);
    assert.equal(runner.last().aborted, true);
    await supervisor.stop();
  });

  test('endAfterProgress expected: a run that ends or stalls after progress is no failure and is started again at once', async () => {
    const { clock, runner, supervisor, ends, counts } = supervised({ policy: { firstProgressDeadline: false, endAfterProgress: 'expected' } });
    supervisor.start();
    await settle();
    runner.last().exit({ stderrTail: ['Address already in use'] });
    await settle();
    assert.deepEqual([supervisor.state, supervisor.status().lastFailure], ['backoff', 'Address already in use'], 'no progress: a failure');
    clock.advance(1000);
    await settle();
    runner.last().progress({ outTimeUs: 40_000 });
    assert.equal(supervisor.status().lastFailure, null, 'progress clears the last failure');
    runner.last().exit({ stderrTail: ['Input/output error'] });
    await settle();
    assert.equal(runner.runs.length, 3, 'started again without waiting');
    assert.deepEqual(brief(ends[1]), { cause: 'exited', reason: 'Input/output error', failure: false, progressed: true });
    runner.last().progress({ outTimeUs: 40_000 });
    clock.advance(10_000);
    await settle();
    assert.equal(runner.runs.length, 4, 'a stalled source: ended and listened for again at once');
    assert.deepEqual(brief(ends[2]), { cause: 'stalled', reason: 'no progress for 10 s', failure: false, progressed: true });
    assert.deepEqual([counts.restarts, supervisor.status().restarts, supervisor.status().lastFailure], [3, 3, null]);
    await supervisor.stop();
  });

  test('restarts are counted as runs start again; the last failure is the ending run\'s reason', async () => {
    const { clock, runner, supervisor, counts } = supervised({ policy: { firstProgressDeadline: false } });
    supervisor.start();
    await settle();
    assert.deepEqual([supervisor.status().restarts, supervisor.status().lastFailure, supervisor.status().pid], [0, null, 1000]);
    runner.last().exit({ stderrTail: ['first line', 'Connection refused'] });
    await settle();
    assert.deepEqual([supervisor.status().restarts, supervisor.status().lastFailure, supervisor.status().pid], [0, 'Connection refused', undefined]);
    clock.advance(1000);
    await settle();
    assert.deepEqual([supervisor.status().restarts, counts.restarts], [1, 1]);
    runner.last().exit({ spawnError: new Error('spawn ffmpeg ENOENT') });
    await settle();
    assert.equal(supervisor.status().lastFailure, 'spawn ffmpeg ENOENT');
    clock.advance(2000);
    await settle();
    runner.last().exit({ exitCode: null, signal: 'SIGSEGV' });
    await settle();
    assert.deepEqual([supervisor.status().restarts, supervisor.status().lastFailure], [2, 'ended by SIGSEGV']);
    await supervisor.stop();
  });

  test('progress: the output\'s bitrate between blocks, blocks the launch does not accept yet ignored', async () => {
    let accepting = false;
    const { clock, runner, supervisor } = supervised({ prepare: async () => ({ args: ['out'], accepting: () => accepting }) });
    supervisor.start();
    await settle();
    runner.last().progress({ outTimeUs: 1_000_000, totalSize: 125_000 });
    assert.deepEqual([supervisor.state, supervisor.status().progress], ['starting', null], 'not accepted: no progress');
    accepting = true;
    runner.last().progress({ outTimeUs: 2_000_000, totalSize: 250_000 });
    assert.deepEqual([supervisor.state, supervisor.status().progress?.kbps], ['running', null], 'no earlier sample to measure from');
    clock.advance(1000);
    runner.last().progress({ outTimeUs: 3_000_000, totalSize: 375_000 });
    assert.deepEqual(supervisor.status().progress, { outTimeUs: 3_000_000, totalSize: 375_000, kbps: 1000, at: clock.now() });
    await supervisor.stop();
  });

  test('the bitrate is the last 4 s of output: a muxer writing in bursts reads as its real rate, not 0 then double (the slicer showed 0 kbit/s while 250 flowed)', async () => {
    const { runner, supervisor } = supervised();
    supervisor.start();
    await settle();
    // 1,000 kbit/s written in 250,000-byte bursts every 2 s, reported every 0.5 s.
    const shown: (number | null | undefined)[] = [];
    for (let block = 0; block <= 24; block++) {
      runner.last().progress({ outTimeUs: block * 500_000, totalSize: Math.floor(block / 4) * 250_000 });
      if (block >= 12) shown.push(supervisor.status().progress?.kbps);
    }
    assert.ok(shown.every((kbps) => kbps !== null && kbps !== undefined && kbps >= 700 && kbps <= 1300), `from 6 s on: ${shown.join(', ')}`);
    await supervisor.stop();
  });

  test('a block before any output is the baseline of the first bitrate', async () => {
    const { runner, supervisor } = supervised();
    supervisor.start();
    await settle();
    runner.last().progress({ outTimeUs: 0, totalSize: 0 });
    assert.equal(supervisor.state, 'starting');
    runner.last().progress({ outTimeUs: 1_000_000, totalSize: 125_000 });
    assert.equal(supervisor.status().progress?.kbps, 1000);
    await supervisor.stop();
  });

  test('the launch: a refusal or a throw is a failed run; it can end its run with a reason; its failure beats stderr; it is closed once the process is gone', async () => {
    let attempt = 0;
    let endRun: EndRun | undefined;
    let relayFailure: string | undefined = undefined;
    const closed: number[] = [];
    const { clock, runner, supervisor, ends } = supervised({
      prepare: async (end): Promise<ProcessLaunch | string> => {
        attempt += 1;
        if (attempt === 1) return 'content is not live';
        if (attempt === 2) throw new Error('the relay could not listen');
        endRun = end;
        const n = attempt;
        return { args: ['srt://127.0.0.1:9'], failure: () => relayFailure, close: async () => void closed.push(n) };
      },
    });
    supervisor.start();
    await settle();
    assert.deepEqual([runner.runs.length, brief(ends[0])], [0, { cause: 'refused', reason: 'content is not live', failure: true, progressed: false }]);
    clock.advance(1000);
    await settle();
    assert.equal(ends[1]?.reason, 'could not prepare the process: the relay could not listen');
    clock.advance(2000);
    await settle();
    assert.equal(runner.runs.length, 1);
    endRun?.('the destination refused the upload (403)');
    assert.equal(supervisor.state, 'ending');
    await settle();
    assert.deepEqual(brief(ends[2]), { cause: 'ended', reason: 'the destination refused the upload (403)', failure: true, progressed: false });
    assert.deepEqual(closed, [3]);
    clock.advance(4000);
    await settle();
    relayFailure = 'the destination went away';
    runner.last().exit({ stderrTail: ['Broken pipe'] });
    await settle();
    assert.deepEqual(brief(ends[3]), { cause: 'exited', reason: 'the destination went away', failure: true, progressed: false });
    assert.deepEqual(closed, [3, 4]);
    endRun?.('a late answer of the closed relay');
    assert.deepEqual([supervisor.state, ends.length], ['backoff', 4], 'an end after the run is gone is no news');
    await supervisor.stop();
  });

  test('describe words every reason, with the default wording at hand', async () => {
    const { clock, runner, supervisor, ends } = supervised({
      describe: (end, fallback) => (end.cause === 'stalled' ? `stalled (${end.progressed ? 'after' : 'before'} output)` : `ffmpeg ended: ${fallback}`),
    });
    supervisor.start();
    await settle();
    runner.last().exit({ stderrTail: ['Broken pipe'] });
    await settle();
    clock.advance(1000);
    await settle();
    clock.advance(10_000);
    await settle();
    assert.deepEqual(ends.map((e) => e.reason), ['ffmpeg ended: Broken pipe', 'stalled (before output)']);
    assert.equal(supervisor.status().lastFailure, 'stalled (before output)');
    await supervisor.stop();
  });

  test('the process marker is on disk as the process spawns and removed once it is gone; a marker that cannot be written does not stop the run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'playline-supervised-'));
    try {
      const file = join(dir, 'pushes', 'p1.json');
      const runner = new FakeProcessRunner();
      const atSpawn: string[] = [];
      let runEnded: () => void = () => undefined;
      const ended = new Promise<void>((resolve) => (runEnded = resolve));
      const { supervisor } = supervised({
        onRunEnd: () => runEnded(),
        runner,
        prepare: async () => ({ args: ['-i', 'in', 'rtmp://127.0.0.1:4000/x/stream'] }),
        run: (command, args, options) =>
          runner.run(command, args, {
            ...options,
            onSpawn: (pid) => {
              options.onSpawn?.(pid);
              atSpawn.push(readFileSync(file, 'utf8'));
            },
          }),
        marker: { file },
      });
      supervisor.start();
      await settle();
      assert.equal(atSpawn.length, 1);
      assert.deepEqual((({ pid, tag }) => ({ pid, tag }))(JSON.parse(atSpawn[0] ?? '{}') as { pid: number; tag: string }), { pid: 1000, tag: 'rtmp://127.0.0.1:4000/x/stream' });
      runner.last().exit();
      await ended;
      assert.equal(existsSync(file), false, 'removed before the end is reported');
      await supervisor.stop();

      const errors: unknown[] = [];
      writeFileSync(join(dir, 'a-file'), '');
      const broken = supervised({ marker: { file: join(dir, 'a-file', 'm.json'), onError: (err) => errors.push(err) } });
      broken.supervisor.start();
      await settle();
      assert.deepEqual([broken.runner.runs.length, broken.supervisor.state, errors.length], [1, 'starting', 1]);
      await broken.supervisor.stop();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
