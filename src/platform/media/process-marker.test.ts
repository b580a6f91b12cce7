import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
    writeFileSync(file, JSON.stringify({ host: `not-${hostname()}`, pid: child.pid, tag: 'some-other-process', dir }));
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

test("a marker copied elsewhere (a restored backup, another data directory) never ends the process of the server it came from", async () => {
  const tag = join(dir, 'live', 'slicer-1');
  const { child, exited } = sleeper(tag);
  try {
    mkdirSync(join(dir, 'live'), { recursive: true });
    const original = join(dir, 'live', 'marker.json');
    writeProcessMarker(original, child.pid as number, tag);
    const restored = join(dir, 'restored-copy', 'live');
    mkdirSync(restored, { recursive: true });
    copyFileSync(original, join(restored, 'marker.json'));
    assert.equal(await killMarkedProcess(join(restored, 'marker.json')), false, 'the copy leaves it alone');
    assert.equal(child.exitCode, null);
    assert.equal(child.signalCode, null);
    // A marker from before markers named their directory is not provably ours either.
    writeFileSync(join(restored, 'legacy.json'), JSON.stringify({ host: hostname(), pid: child.pid, tag }));
    assert.equal(await killMarkedProcess(join(restored, 'legacy.json')), false);
    assert.equal(await killMarkedProcess(original), true, 'where it was written, it is an orphan of ours');
    assert.equal(await exited, 'SIGKILL');
  } finally {
    child.kill('SIGKILL');
  }
});
