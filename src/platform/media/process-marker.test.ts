import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { killMarkedProcess, writeProcessMarker } from './process-marker.js';

const dir = mkdtempSync(join(tmpdir(), 'playline-marker-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const sleeper = (tag: string) => {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', tag], { stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  return { child, exited };
};

test('kills the recorded process when it still runs with its tag', async () => {
  const tag = join(dir, 'job-1');
  const { child, exited } = sleeper(tag);
  const file = join(dir, 'marker-1.json');
  writeProcessMarker(file, child.pid as number, tag);
  assert.equal(await killMarkedProcess(file), true);
  assert.equal(await exited, 'SIGKILL');
});

test('never kills a process whose command line lacks the tag (a recycled pid), nor one of another host', async () => {
  const { child, exited } = sleeper('some-other-process');
  try {
    const file = join(dir, 'marker-2.json');
    writeProcessMarker(file, child.pid as number, join(dir, 'job-2'));
    assert.equal(await killMarkedProcess(file), false);
    writeFileSync(file, JSON.stringify({ host: `not-${hostname()}`, pid: child.pid, tag: 'some-other-process' }));
    assert.equal(await killMarkedProcess(file), false);
    assert.equal(child.exitCode, null);
    assert.equal(child.signalCode, null);
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
});

test('a missing or damaged marker is nothing to kill', async () => {
  assert.equal(await killMarkedProcess(join(dir, 'absent.json')), false);
  writeFileSync(join(dir, 'bad.json'), '{');
  assert.equal(await killMarkedProcess(join(dir, 'bad.json')), false);
});
