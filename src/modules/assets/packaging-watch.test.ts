import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../platform/clock.js';
import { OUTPUT_CHECK_MS, PackagingWatch } from './packaging-watch.js';

/** Lets the watch's asynchronous checks (a CPU reading, a directory walk) finish. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

const watching = (cpu: Map<number, number>) => {
  const dir = mkdtempSync(join(tmpdir(), 'playline-watch-'));
  const clock = new FakeClock();
  const watch = new PackagingWatch({
    clock,
    jobSignal: new AbortController().signal,
    cpuBudgetMs: 160_000,
    readCpu: (pid) => Promise.resolve(cpu.get(pid)),
    workDir: dir,
    maxOutputBytes: 1 << 30,
  });
  /** Advances the clock by `ms` in check steps, letting each check run. */
  const pass = async (ms: number) => {
    for (let t = 0; t < ms; t += OUTPUT_CHECK_MS) {
      clock.advance(OUTPUT_CHECK_MS);
      await settle();
    }
  };
  return { watch, pass, done: () => (watch.stop(), rmSync(dir, { recursive: true, force: true })) };
};

test('issue 36: a run that waits for a CPU on a loaded machine is not stopped: an hour of wall-clock time at 100 CPU s is within a 160 CPU s budget', async () => {
  const cpu = new Map([[4242, 0]]);
  const { watch, pass, done } = watching(cpu);
  try {
    watch.track(4242);
    cpu.set(4242, 100);
    await pass(3_600_000);
    assert.equal(watch.exceeded, undefined, 'the wall-clock time of the old budget (160 s) was long passed');
    assert.equal(watch.signal.aborted, false);
    assert.equal(watch.cpuSpentMs, 100_000);
  } finally {
    done();
  }
});

test('the CPU time of every process of the run counts together; past the budget the run is stopped with the reason', async () => {
  const cpu = new Map([[1, 0]]);
  const { watch, pass, done } = watching(cpu);
  try {
    watch.track(1);
    cpu.set(1, 90);
    await pass(OUTPUT_CHECK_MS);
    cpu.delete(1); // the encoder ended: its last reading stands
    watch.track(2);
    cpu.set(2, 60);
    await pass(OUTPUT_CHECK_MS);
    assert.equal(watch.exceeded, undefined, '150 CPU s of 160');
    cpu.set(2, 75);
    await pass(OUTPUT_CHECK_MS);
    assert.equal(watch.exceeded, 'Packaging was stopped after 160 s of CPU time, the most this server spends on a video of this duration and frame rate');
    assert.equal(watch.signal.aborted, true);
  } finally {
    done();
  }
});
