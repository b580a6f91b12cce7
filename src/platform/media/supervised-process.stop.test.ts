import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock.js';
import { FakeProcessRunner, basePolicy, settle, supervised } from './fake-process-runner.test-support.js';
import { runMediaProcess } from './media-process.js';
import { SupervisedProcess, type ProcessLaunch, type RunEnd } from './supervised-process.js';

describe('SupervisedProcess: stop and kill grace', () => {
  test('stop during the backoff ends the supervision at once: no further run, no timer left', async () => {
    const { clock, runner, supervisor } = supervised();
    supervisor.start();
    await settle();
    runner.last().exit({ stderrTail: ['refused'] });
    await settle();
    assert.equal(supervisor.state, 'backoff');
    await supervisor.stop();
    assert.deepEqual([supervisor.state, clock.pendingTimers()], ['stopped', 0]);
    clock.advance(60_000);
    await settle();
    assert.equal(runner.runs.length, 1);
  });

  test('stop while running aborts the run with the kill grace and resolves only once the process is gone; it is no failure', async () => {
    const runner = new FakeProcessRunner({ holdOnAbort: true });
    const { supervisor, ends } = supervised({ runner });
    supervisor.start();
    await settle();
    runner.last().progress({ outTimeUs: 1_000_000 });
    let stopped = false;
    const stopping = supervisor.stop().then(() => (stopped = true));
    await settle();
    assert.deepEqual([runner.last().aborted, supervisor.state, stopped], [true, 'stopping', false], 'the process is in its grace: stop waits');
    assert.equal(runner.last().options.killGraceMs, basePolicy.killGraceMs, 'the runner ends it: SIGTERM, then SIGKILL after the grace');
    runner.last().exit({ exitCode: null, signal: 'SIGKILL' });
    await stopping;
    assert.deepEqual([supervisor.state, ends.length, runner.runs.length, supervisor.status().pid], ['stopped', 0, 1, undefined]);
  });

  test('stop while a run is being prepared: its launch is closed and nothing spawns', async () => {
    let release: (launch: ProcessLaunch) => void = () => undefined;
    let aborted = false;
    const closed: string[] = [];
    const { runner, supervisor } = supervised({
      prepare: (_end, signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => (aborted = true));
          release = resolve;
        }),
    });
    supervisor.start();
    await settle();
    const stopping = supervisor.stop();
    assert.equal(aborted, true, 'the preparation is told to give up');
    release({ args: ['out'], close: async () => void closed.push('relay') });
    await stopping;
    assert.deepEqual([runner.runs.length, closed, supervisor.state], [0, ['relay'], 'stopped']);
  });

  test('stop before start, and a second stop, are harmless', async () => {
    const { runner, supervisor } = supervised();
    await supervisor.stop();
    supervisor.start();
    await supervisor.stop();
    assert.deepEqual([runner.runs.length, supervisor.state], [0, 'stopped']);
  });

  test('a restart no longer wanted ends the supervision after the backoff', async () => {
    let asked = 0;
    const { clock, runner, supervisor, counts } = supervised({ beforeRestart: async () => (asked += 1) < 0 });
    supervisor.start();
    await settle();
    runner.last().exit();
    await settle();
    clock.advance(999);
    await settle();
    assert.equal(asked, 0, 'asked after the backoff, not before');
    clock.advance(1);
    await settle();
    assert.deepEqual([asked, supervisor.state, runner.runs.length, counts.restarts], [1, 'stopped', 1, 0]);
    await supervisor.stop();
  });

  test('a real process that ignores SIGTERM is killed with SIGKILL after the grace when the stall rule ends it; stop leaves no process', async () => {
    const clock = new FakeClock();
    const ends: RunEnd[] = [];
    let running: () => void = () => undefined;
    const states: string[] = [];
    // The handler is in place before the first progress block, so SIGTERM is certainly ignored.
    const script = 'process.on("SIGTERM", () => {}); console.log("out_time_us=1000000"); console.log("progress=continue"); setInterval(() => {}, 1000)';
    const supervisor = new SupervisedProcess({
      command: process.execPath,
      prepare: async () => ({ args: ['-e', script] }),
      run: runMediaProcess,
      clock,
      policy: { ...basePolicy, killGraceMs: 50, endAfterProgress: 'expected' },
      onStateChange: (state) => {
        states.push(state);
        if (state === 'running') running();
      },
      onRunEnd: (end) => ends.push(end),
    });
    const firstRun = new Promise<void>((resolve) => (running = resolve));
    supervisor.start();
    await firstRun;
    const secondRun = new Promise<void>((resolve) => (running = resolve));
    clock.advance(basePolicy.stallMs);
    await secondRun;
    assert.equal(ends[0]?.cause, 'stalled');
    assert.equal(ends[0]?.result?.signal, 'SIGKILL', 'SIGTERM was ignored, so only SIGKILL could end it');
    const pid = supervisor.status().pid;
    assert.ok(pid !== undefined && pid > 0);
    await supervisor.stop();
    assert.throws(() => process.kill(pid, 0), /ESRCH/, 'stop resolved once the process was gone');
    assert.deepEqual(states, ['starting', 'running', 'ending', 'backoff', 'starting', 'running', 'stopping', 'stopped']);
  });
});
