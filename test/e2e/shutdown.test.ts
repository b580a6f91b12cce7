import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs the stand-in server, sends SIGTERM once it is ready, and gives its exit code and log lines. */
async function terminate(shutdown: 'clean' | 'hung'): Promise<{ code: number | null; lines: Array<Record<string, unknown>> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/shutdown-server.ts'], {
    cwd: root,
    env: { ...process.env, SHUTDOWN: shutdown, PLAYLINE_SHUTDOWN_GRACE_MS: '300', PLAYLINE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (output.startsWith('ready\n') && !child.killed) child.kill('SIGTERM');
  });
  // Bounded: without a forced exit the hung close would wait forever.
  const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  clearTimeout(guard);
  const lines = output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
  return { code, lines };
}

test('a shutdown whose close never finishes exits after the grace period with code 1 and says why', async () => {
  const { code, lines } = await terminate('hung');
  assert.equal(code, 1, 'forced exit, not SIGKILL by the test');
  assert.deepEqual(lines.map((l) => l.msg), ['shutting down: finishing in-flight requests', 'shutdown still running after 300 ms (PLAYLINE_SHUTDOWN_GRACE_MS): exiting with code 1']);
  assert.equal(lines[1]?.level, 50);
});

test('a shutdown that finishes within the grace period exits with code 0', async () => {
  const { code, lines } = await terminate('clean');
  assert.equal(code, 0);
  assert.deepEqual(lines.map((l) => l.msg), ['shutting down: finishing in-flight requests']);
});
