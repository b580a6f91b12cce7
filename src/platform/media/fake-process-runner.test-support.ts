import assert from 'node:assert/strict';
import { FakeClock } from '../clock.js';
import type { MediaProcessOptions, MediaProcessResult, ProcessRunner } from './media-process.js';
import { SupervisedProcess, type RunEnd, type SupervisedProcessOptions } from './supervised-process.js';
import type { SupervisionPolicy } from './supervision-policy.js';

/** One run of the fake tool: what it was given, and the test's hands on it. */
export interface FakeRun {
  command: string;
  args: readonly string[];
  options: MediaProcessOptions;
  pid: number;
  /** Whether the supervisor aborted it (the real runner would send SIGTERM now). */
  aborted: boolean;
  /** Feeds one `-progress` block. */
  progress(block: { outTimeUs: number; totalSize?: number }): void;
  /** Ends it as if the tool exited (by default with code 1). */
  exit(result?: Partial<MediaProcessResult>): void;
}

/**
 * A stand-in for ffmpeg behind the ProcessRunner port: each run calls onSpawn at once (as the
 * real runner does, synchronously) and waits until the test ends it. An abort ends it at once
 * as the real runner's SIGTERM would, unless `holdOnAbort` keeps it running (a process in its
 * kill grace) until the test calls `exit`.
 */
export class FakeProcessRunner {
  readonly runs: FakeRun[] = [];

  constructor(private readonly behaviour: { holdOnAbort?: boolean } = {}) {}

  readonly run: ProcessRunner = (command, args, options) =>
    new Promise((resolve) => {
      let done = false;
      const finish = (result: Partial<MediaProcessResult>) => {
        if (done) return;
        done = true;
        resolve({ exitCode: 1, signal: null, aborted: fake.aborted, spawnError: undefined, stdout: '', stderrTail: [], ...result });
      };
      const pid = 1000 + this.runs.length;
      let written = 0;
      const fake: FakeRun = {
        command,
        args,
        options,
        pid,
        aborted: false,
        progress: ({ outTimeUs, totalSize }) => {
          // A measured stdout (the first output written there): its bytes come as data, progress on stderr.
          const { onStdoutBytes, onStderrLine } = options;
          if (onStdoutBytes && onStderrLine) {
            if (totalSize !== undefined && totalSize > written) onStdoutBytes(totalSize - written);
            written = Math.max(written, totalSize ?? 0);
            for (const line of [`out_time_us=${outTimeUs}`, 'progress=continue']) assert.ok(onStderrLine(line), 'progress lines are taken from stderr');
            return;
          }
          const feed = options.onStdoutLine;
          assert.ok(feed, 'the runner reads stdout');
          if (totalSize !== undefined) feed(`total_size=${totalSize}`);
          feed(`out_time_us=${outTimeUs}`);
          feed('progress=continue');
        },
        exit: (result = {}) => finish(result),
      };
      this.runs.push(fake);
      if (options.signal?.aborted) {
        finish({ exitCode: null, aborted: true });
        return;
      }
      options.signal?.addEventListener(
        'abort',
        () => {
          fake.aborted = true;
          if (!this.behaviour.holdOnAbort) finish({ exitCode: null, signal: 'SIGTERM', aborted: true });
        },
        { once: true },
      );
      options.onSpawn?.(pid);
    });

  /** The latest run. */
  last(): FakeRun {
    const latest = this.runs.at(-1);
    assert.ok(latest, 'the tool ran');
    return latest;
  }
}

/** Lets every pending promise continuation run (the fakes resolve within a turn). */
export const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A policy with small, distinct numbers: 1 s doubling to 4 s, 2.5 s of grace, 10 s stall rule from the start. */
export const basePolicy: SupervisionPolicy = { backoff: { initialMs: 1000, maxMs: 4000 }, killGraceMs: 2500, stallMs: 10_000, firstProgressDeadline: true, endAfterProgress: 'failure' };

/** A supervisor over a fake runner and a fake clock, recording its run ends and restarts. */
export function supervised(options: Partial<Omit<SupervisedProcessOptions, 'policy'>> & { policy?: Partial<SupervisionPolicy>; runner?: FakeProcessRunner } = {}) {
  const clock = new FakeClock();
  const runner = options.runner ?? new FakeProcessRunner();
  const ends: RunEnd[] = [];
  const counts = { restarts: 0 };
  const supervisor = new SupervisedProcess({
    command: 'ffmpeg',
    prepare: async () => ({ args: ['-i', 'in', 'out'] }),
    run: runner.run,
    clock,
    ...options,
    policy: { ...basePolicy, ...options.policy },
    onRunEnd: (end) => {
      ends.push(end);
      options.onRunEnd?.(end);
    },
    onRestart: () => counts.restarts++,
  });
  return { clock, runner, supervisor, ends, counts };
}

/** The parts of a run end a test compares. */
export const brief = (end: RunEnd | undefined) => end && { cause: end.cause, reason: end.reason, failure: end.failure, progressed: end.progressed };
