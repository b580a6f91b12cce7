import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sharedPlaylineBin } from './built-package.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process printed on stdout and stderr so far. */
  output(): string;
  /** SIGKILL: no shutdown hooks, no flush (a crash). */
  kill9(): Promise<void>;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
}

/**
 * How long a start may take before the helper gives up on it: a guard against a server that
 * hangs, not a speed check (under a load of 20+ a start took more than the old 30 s). One setting.
 */
const START_LIMIT_MS = Number(process.env.PLAYLINE_TEST_SERVER_START_MS ?? 300_000);

/**
 * Every server process this file spawned and has not seen exit. A spawned server is unref'd
 * between the helper's own waits, so one a test forgot to stop cannot keep the file alive (Node's
 * test runner ends a file only once its event loop drains; a leaked server held two files for
 * ever); the exit hook then kills whatever is left, so none outlives its test file either.
 */
const spawned = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of spawned) child.kill('SIGKILL');
});

/** The server processes of this file still running (spawned here, not yet seen to exit). */
export const runningServerProcesses = (): number => spawned.size;

/** Whether the child (and its output pipes) may keep this process alive. */
function hold(child: ChildProcess, held: boolean): void {
  for (const handle of [child, child.stdout, child.stderr] as Array<{ ref?: () => void; unref?: () => void } | null>) {
    if (held) handle?.ref?.();
    else handle?.unref?.();
  }
}

/**
 * Starts the real server (`playline serve` of the built package, as npm installs it: built once
 * per run by built-package.ts, it starts in about half the time of `tsx src/cli/main.ts`
 * compiling from source) on a free port and waits for the "listening" line. The environment is
 * the test's, plus `env`. On every failure path (exit before listening, the start guard, a spawn
 * error) the child is killed and awaited before the error is thrown: nothing is left running.
 */
export async function startServerProcess(env: Record<string, string>, args: string[] = [], options: { startLimitMs?: number } = {}): Promise<ServerProcess> {
  const limit = options.startLimitMs ?? START_LIMIT_MS;
  const child = spawn(process.execPath, [await sharedPlaylineBin(), 'serve', '--port', '0', ...args], {
    cwd: root,
    env: { ...process.env, PLAYLINE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      spawned.delete(child);
      resolve(code);
    });
    // A failed spawn emits 'error' and no 'exit'.
    child.once('error', (err) => {
      output += `\nspawn error: ${err.message}`;
      spawned.delete(child);
      resolve(null);
    });
  });
  const end = async (signal: NodeJS.Signals): Promise<number | null> => {
    hold(child, true); // awaited: the exit must be seen before the caller goes on
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`server did not start within ${limit} ms (PLAYLINE_TEST_SERVER_START_MS):\n${output}`)), limit);
      const check = () => {
        const match = /Playline listening on (http:\/\/[^\s]+)/.exec(output);
        if (match?.[1]) resolve(match[1]);
      };
      child.stdout?.on('data', check);
      void exited.then((code) => reject(new Error(`server exited with ${code} before listening:\n${output}`)));
    });
    hold(child, false);
    return {
      child,
      url,
      output: () => output,
      async kill9() {
        await end('SIGKILL');
      },
      stop: () => end('SIGTERM'),
    };
  } catch (err) {
    await end('SIGKILL');
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** The workspace id and API key a first start prints in its banner (fails the test when there is none). */
export function bootstrapCredentials(server: Pick<ServerProcess, 'output'>): { owner: string; key: string } {
  const out = server.output();
  const owner = /Workspace ID: (\S+)/.exec(out)?.[1];
  const key = /API key:\s+(\S+)/.exec(out)?.[1];
  if (!owner || !key) throw new Error(`no bootstrap banner (workspace id and API key) in:\n${out}`);
  return { owner, key };
}
