import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failureLine, memoryLimitedRunner, reachedMemoryLimit, runMediaProcess, succeeded, type MediaProcessResult } from './media-process.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';

const node = process.execPath;

test('runs an argument array without a shell: stdout by line, the stderr tail, the exit code', async () => {
  const lines: string[] = [];
  const script = 'for (let i = 0; i < 30; i++) console.error("err " + i); console.log("a=1"); console.log(process.argv[1]); process.exit(3)';
  const result = await runMediaProcess(node, ['-e', script, '$(touch /tmp/never) ; echo'], { onStdoutLine: (l) => lines.push(l), stderrTailLines: 5 });
  assert.deepEqual(lines, ['a=1', '$(touch /tmp/never) ; echo'], 'the argument arrives verbatim');
  assert.equal(result.exitCode, 3);
  assert.equal(succeeded(result), false);
  assert.deepEqual(result.stderrTail, ['err 25', 'err 26', 'err 27', 'err 28', 'err 29']);
  assert.equal(failureLine(result), 'err 29');
  assert.equal(result.stdout, '', 'stdout is only kept when asked');
});

test('collects stdout when asked', async () => {
  const result = await runMediaProcess(node, ['-e', 'console.log(JSON.stringify({ok: true}))'], { collectStdout: true });
  assert.equal(succeeded(result), true);
  assert.deepEqual(JSON.parse(result.stdout), { ok: true });
});

test('an abort stops the process (SIGTERM, then SIGKILL when it ignores it)', async () => {
  const controller = new AbortController();
  let pid = 0;
  const running = runMediaProcess(node, ['-e', 'process.on("SIGTERM", () => {}); console.log("ready"); setInterval(() => {}, 1000)'], {
    signal: controller.signal,
    killGraceMs: 50,
    onSpawn: (p) => (pid = p),
    onStdoutLine: () => controller.abort(),
  });
  const result = await running;
  assert.ok(pid > 0);
  assert.equal(result.aborted, true);
  assert.equal(result.signal, 'SIGKILL');
  assert.equal(succeeded(result), false);
});

test('the pid is handed over as the process is spawned, before the caller gets its promise (a kill -9 then finds the marker)', async () => {
  const pids: number[] = [];
  const running = runMediaProcess(node, ['-e', ''], { onSpawn: (p) => pids.push(p) });
  assert.equal(pids.length, 1, 'no turn of the event loop separates the spawn from onSpawn');
  assert.ok((pids[0] ?? 0) > 0);
  await running;
  assert.equal(pids.length, 1);
});

test('an executable that does not exist is a result, not an exception', async () => {
  let spawned = false;
  const result = await runMediaProcess('/nonexistent/ffmpeg', ['-version'], { onSpawn: () => (spawned = true) });
  assert.equal(spawned, false, 'a command that could not start has no pid to record');
  assert.equal(succeeded(result), false);
  assert.match(String((result.spawnError as NodeJS.ErrnoException | undefined)?.code), /ENOENT/);
  assert.match(failureLine(result), /ENOENT/);
});

test('an already aborted signal starts nothing', async () => {
  const result = await runMediaProcess(node, ['-e', 'console.log(1)'], { signal: AbortSignal.abort() });
  assert.equal(result.aborted, true);
  assert.equal(result.exitCode, null);
});

test('failure lines name no server directory: each absolute path keeps its last part, URLs stay whole', () => {
  const result = (line: string): MediaProcessResult => ({ exitCode: 1, signal: null, aborted: false, spawnError: undefined, stdout: '', stderrTail: [line] });
  assert.equal(failureLine(result('/var/lib/playline/media/live/ws1/sl1/index.m3u8: Invalid data found when processing input')), 'index.m3u8: Invalid data found when processing input');
  assert.equal(failureLine(result("Error opening input file '/tmp/playline-fifo-Ab12/options'.")), "Error opening input file 'options'.");
  assert.equal(failureLine(result('Connection to srt://127.0.0.1:9000 failed: Input/output error')), 'Connection to srt://127.0.0.1:9000 failed: Input/output error');
  assert.equal(failureLine(result('[hls @ 0x55] Failed to open segment rtmp://h/app/x (/data/media/assets/ws/a/seg.m4s)')), '[hls @ 0x55] Failed to open segment rtmp://h/app/x (seg.m4s)');
});

test('a process can read a stream on its stdin; one that ends before reading it all ends cleanly', async () => {
  const { Readable } = await import('node:stream');
  const read = await runMediaProcess(process.execPath, ['-e', 'let n = 0; process.stdin.on("data", (c) => (n += c.length)); process.stdin.on("end", () => console.log(n))'], { stdin: Readable.from([Buffer.alloc(70_000), Buffer.alloc(30_000)]), collectStdout: true });
  assert.equal(read.stdout.trim(), '100000');
  const early = await runMediaProcess(process.execPath, ['-e', 'process.exit(0)'], { stdin: Readable.from((function* () { for (let i = 0; i < 100; i++) yield Buffer.alloc(65_536); })()) });
  assert.equal(early.exitCode, 0);
});

test('a measured stdout is counted, not kept; stderr lines a caller takes (progress) stay out of the failure tail', async () => {
  let bytes = 0;
  const taken: string[] = [];
  const result = await runMediaProcess(process.execPath, ['-e', 'process.stdout.write(Buffer.alloc(100000)); console.error("out_time_us=40000"); console.error("a real error"); process.exitCode = 1'], {
    onStdoutBytes: (n) => (bytes += n),
    onStderrLine: (line) => line.startsWith('out_time_us=') && (taken.push(line), true),
  });
  assert.equal(bytes, 100_000);
  assert.deepEqual(taken, ['out_time_us=40000']);
  assert.deepEqual(result.stderrTail, ['a real error']);
  assert.equal(result.stdout, '');
});

test('a memory limit (RLIMIT_AS through prlimit) makes a tool that needs more fail alone, and says so; the same run without it succeeds', { skip: await mediaToolsSkip() }, async () => {
  // x264 on 1080p maps far more than 400 MiB (threads, lookahead): refused at its first allocations.
  const args = ['-hide_banner', '-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=1920x1080:rate=25', '-frames:v', '3', '-c:v', 'libx264', '-f', 'null', '-'];
  let pid = 0;
  const limited = await memoryLimitedRunner(400 * 1024 * 1024)('ffmpeg', args, { onSpawn: (p) => (pid = p) });
  assert.notEqual(limited.exitCode, 0);
  assert.equal(reachedMemoryLimit(limited, 400 * 1024 * 1024), true, limited.stderrTail.join('\n'));
  assert.ok(pid > 0);
  const free = await runMediaProcess('ffmpeg', args, {});
  assert.equal(free.exitCode, 0, free.stderrTail.join('\n'));
  assert.equal(reachedMemoryLimit(free, 400 * 1024 * 1024), false);
  assert.equal(reachedMemoryLimit(limited, 0), false, 'no limit, no such verdict');
});
