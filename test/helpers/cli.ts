import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sharedPlaylineBin } from './built-package.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `playline <args>` as a separate process, as a user runs it: the built executable
 * (`dist/cli/bin.js` of the package built once per test run, built-package.ts), which starts in
 * about half the time of `tsx src/cli/main.ts` compiling from source. The environment is the
 * test's plus `env`; `input` is fed to its stdin; never throws on a non-zero exit.
 */
export async function playline(args: string[], env: Record<string, string | undefined> = {}, options: { input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  const bin = await sharedPlaylineBin();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: root,
      env: { ...process.env, PLAYLINE_LOG_LEVEL: 'warn', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`playline ${args.join(' ')} did not end within ${options.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
