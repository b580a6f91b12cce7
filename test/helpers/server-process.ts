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
 * Starts the real server (`playline serve` of the built package, as npm installs it: built once
 * per run by built-package.ts, it starts in about half the time of `tsx src/cli/main.ts`
 * compiling from source) on a free port and waits for the "listening" line. The environment is
 * the test's, plus `env`.
 */
export async function startServerProcess(env: Record<string, string>, args: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [await sharedPlaylineBin(), 'serve', '--port', '0', ...args], {
    cwd: root,
    env: { ...process.env, PLAYLINE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within 30 s:\n${output}`)), 30_000);
    const check = () => {
      const match = /Playline listening on (http:\/\/[^\s]+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
  return {
    child,
    url,
    output: () => output,
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The workspace id and API key a first start prints in its banner (fails the test when there is none). */
export function bootstrapCredentials(server: Pick<ServerProcess, 'output'>): { owner: string; key: string } {
  const out = server.output();
  const owner = /Workspace ID: (\S+)/.exec(out)?.[1];
  const key = /API key:\s+(\S+)/.exec(out)?.[1];
  if (!owner || !key) throw new Error(`no bootstrap banner (workspace id and API key) in:\n${out}`);
  return { owner, key };
}
