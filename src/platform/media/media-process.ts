import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

export interface MediaProcessOptions {
  /** Aborting stops the process: SIGTERM, then SIGKILL after `killGraceMs`. */
  signal?: AbortSignal;
  /** Each stdout line as it arrives (e.g. ffmpeg's `-progress pipe:1` key=value lines). */
  onStdoutLine?: (line: string) => void;
  /** Keep the whole stdout in the result (ffprobe's JSON); off by default. */
  collectStdout?: boolean;
  /** Called synchronously right after the process is spawned, with its pid (to record it, e.g. for orphan clean-up). */
  onSpawn?: (pid: number) => void;
  /** Lines of stderr kept for failure reasons. Default 20. */
  stderrTailLines?: number;
  /** Time between SIGTERM and SIGKILL once aborted. Default 3 s; 0 kills at once. */
  killGraceMs?: number;
  /** Working directory of the process (default: this process's). */
  cwd?: string;
  /** What the process reads on its stdin (e.g. the FLV of an RTMP publisher); default: nothing. */
  stdin?: Readable;
  /** Stdout is data, not lines: each chunk's size is handed over and the bytes dropped (a stream only measured). */
  onStdoutBytes?: (bytes: number) => void;
  /** Each stderr line first; returning true takes it (e.g. progress written to stderr), so it is not in the failure tail. */
  onStderrLine?: (line: string) => boolean;
  /**
   * The most virtual memory (RLIMIT_AS, bytes) the process may map; undefined or 0: no limit.
   * Set with `prlimit --as=<bytes> --`, which execs the tool (same pid, same command line after
   * it), so a decoding bomb fails to allocate and ends alone instead of drawing the host's OOM killer.
   */
  memoryLimitBytes?: number;
}

/** How a media process ended. Never thrown: the caller decides what a failure means. */
export interface MediaProcessResult {
  /** The exit code, or null when a signal ended it or it never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** True when the caller's signal aborted it. */
  aborted: boolean;
  /** Why it could not start (e.g. ENOENT: no such executable). */
  spawnError: Error | undefined;
  /** The whole stdout when `collectStdout`, else ''. */
  stdout: string;
  /** The last lines of stderr, oldest first. */
  stderrTail: string[];
}

export const succeeded = (result: MediaProcessResult): boolean => result.exitCode === 0 && !result.aborted;

/** The port through which supervisors run a media tool: `runMediaProcess`, or a fake in tests. */
export type ProcessRunner = (command: string, args: readonly string[], options: MediaProcessOptions) => Promise<MediaProcessResult>;

/**
 * Runs a media tool with an argument array (never through a shell, so no argument is ever
 * interpreted), streams stdout by line, keeps the tail of stderr, and stops the process when
 * the caller aborts. Resolves once the process is gone and its pipes are drained.
 */
export function runMediaProcess(command: string, args: readonly string[], options: MediaProcessOptions = {}): Promise<MediaProcessResult> {
  const tailSize = options.stderrTailLines ?? 20;
  const stderrTail: string[] = [];
  let stdout = '';
  let aborted = false;
  return new Promise((resolve) => {
    if (options.signal?.aborted) {
      resolve({ exitCode: null, signal: null, aborted: true, spawnError: undefined, stdout: '', stderrTail: [] });
      return;
    }
    const limit = prlimitAvailable() ? (options.memoryLimitBytes ?? 0) : 0;
    const [file, argv] = limit > 0 ? [PRLIMIT, [`--as=${Math.floor(limit)}`, '--', command, ...args]] : [command, args];
    const child = spawn(file, argv, { stdio: ['pipe', 'pipe', 'pipe'], shell: false, windowsHide: true, ...(options.cwd !== undefined ? { cwd: options.cwd } : {}) });
    // The process may end before it read everything (EPIPE): that is its end, reported by 'close'.
    child.stdin.on('error', () => undefined);
    // Nothing to read unless a stream is given: the tool sees its stdin end at once.
    if (options.stdin) options.stdin.pipe(child.stdin);
    else child.stdin.end();
    let spawnError: Error | undefined;
    let killTimer: NodeJS.Timeout | undefined;

    const onAbort = () => {
      aborted = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const grace = options.killGraceMs ?? 3000;
      if (grace === 0) {
        child.kill('SIGKILL');
        return;
      }
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), grace);
      killTimer.unref();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    // The pid is known as soon as spawn() returns (undefined: the command could not start). It is
    // handed over now, not on the 'spawn' event a turn later, so a marker recorded from it is on
    // disk before anything else runs: a server killed right after the spawn leaves no unmarked process.
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    child.once('error', (err) => {
      spawnError = err;
    });

    const { onStdoutBytes } = options;
    if (onStdoutBytes) child.stdout.on('data', (chunk: Buffer) => onStdoutBytes(chunk.length));
    else {
      const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
      lines.on('line', (line) => {
        if (options.collectStdout) stdout += `${line}\n`;
        options.onStdoutLine?.(line);
      });
    }
    const errLines = createInterface({ input: child.stderr, crlfDelay: Infinity });
    errLines.on('line', (line) => {
      if (line.trim() === '' || options.onStderrLine?.(line)) return;
      stderrTail.push(line);
      if (stderrTail.length > tailSize) stderrTail.shift();
    });

    // 'close' comes after 'exit' once stdio is drained (or after 'error' when it never started).
    child.once('close', (exitCode, signal) => {
      if (killTimer) clearTimeout(killTimer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ exitCode, signal, aborted, spawnError, stdout, stderrTail });
    });
  });
}

/** `runMediaProcess` with every process under a memory limit (PLAYLINE_MEDIA_MEMORY_LIMIT_MB; 0: none). */
export const memoryLimitedRunner = (memoryLimitBytes: number): ProcessRunner =>
  (command, args, options) => runMediaProcess(command, args, { memoryLimitBytes, ...options });

/** util-linux's prlimit, looked up in PATH (Debian: always installed). */
export const PRLIMIT = 'prlimit';

let prlimitFound: boolean | undefined;

/**
 * Whether prlimit is on the PATH (looked for once). Without it (not Linux, a minimal image) the
 * tools run with no memory limit rather than not at all; the runtime warns at start-up.
 */
export function prlimitAvailable(): boolean {
  prlimitFound ??= (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, PRLIMIT)));
  return prlimitFound;
}

/**
 * Whether a process run under `memoryLimitBytes` most likely ended because it reached the limit:
 * the tools say "Cannot allocate memory" (ENOMEM) or die on a failed allocation (SIGSEGV, SIGABRT,
 * SIGBUS: a library that does not check malloc's answer).
 */
export function reachedMemoryLimit(result: MediaProcessResult, memoryLimitBytes: number | undefined): boolean {
  if (!memoryLimitBytes || result.aborted || result.exitCode === 0) return false;
  if (result.signal === 'SIGSEGV' || result.signal === 'SIGABRT' || result.signal === 'SIGBUS') return true;
  return result.stderrTail.some((line) => /cannot allocate memory|out of memory|ENOMEM|failed to allocate|malloc of size \d+ failed|failed to map segment|std::bad_alloc/i.test(line));
}

/** One line that says why a tool failed: the last stderr line, or how it ended. */
export function failureLine(result: MediaProcessResult): string {
  if (result.spawnError) return withoutServerPaths(result.spawnError.message);
  const last = result.stderrTail.at(-1)?.trim();
  if (last) return withoutServerPaths(last);
  return result.signal ? `ended by ${result.signal}` : `exit code ${String(result.exitCode)}`;
}

/** An absolute path standing alone (not the `//host` of a URL): at the start, or after a space, quote or bracket. */
const ABSOLUTE_PATH = /(^|[\s'"(=[])\/(?:[^\s'"():/]+\/)+([^\s'"():/]*)/g;

/**
 * A tool's message without the server's directories: failure reasons reach customers (a slicer's
 * `live.failure_reason`, an asset's or a schedule's reason), and a path such as
 * `/var/lib/playline/media/live/<workspace>/<slicer>/index.m3u8` tells them how the server is laid
 * out. Each absolute path keeps only its last part (`index.m3u8`).
 */
const withoutServerPaths = (text: string): string => text.replace(ABSOLUTE_PATH, (_match, before: string, last: string) => `${before}${last || '/'}`);
