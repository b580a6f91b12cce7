import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Debian's wrk: a C load tool with sendfile-sized reads, so it is not the bottleneck at segment sizes (autocannon is). */
export const WRK = process.env.BENCH_WRK ?? '/usr/bin/wrk';

export const wrkMissing = (): string | false => (existsSync(WRK) ? false : `${WRK} is not installed (Debian: apt-get install wrk)`);

export interface WrkResult {
  requestsPerSec: number;
  bytesPerSec: number;
  requests: number;
  non2xx: number;
  socketErrors: number;
  /** wrk's socket error line, when there was one. */
  errorDetail: string;
  seconds: number;
}

const UNITS: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };

/**
 * `wrk` over keep-alive connections for `durationS`, the paths requested in turn (a Lua script
 * per run; each wrk thread cycles through them). Totals are read from wrk's summary.
 */
export async function wrk(options: { url: string; paths: string[]; connections: number; durationS: number; threads?: number }): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'playline-wrk-'));
  try {
    const script = join(dir, 'paths.lua');
    writeFileSync(
      script,
      [
        `local paths = { ${options.paths.map((p) => JSON.stringify(p)).join(', ')} }`,
        'local i = 0',
        'request = function()',
        '  i = i % #paths + 1',
        '  return wrk.format("GET", paths[i])',
        'end',
      ].join('\n'),
    );
    const threads = options.threads ?? 2;
    // A generous timeout: a slow answer is a low rate, not a lost request (wrk's default 2 s counts it as an error).
    const { stdout } = await run(WRK, ['-t', String(threads), '-c', String(Math.max(options.connections, threads)), '-d', `${options.durationS}s`, '--timeout', '30s', '-s', script, options.url], { maxBuffer: 1024 * 1024 });
    const number = (re: RegExp) => Number(re.exec(stdout)?.[1] ?? 'NaN');
    const requests = number(/(\d+) requests in/);
    const seconds = number(/requests in ([\d.]+)s/);
    const transfer = /Transfer\/sec:\s+([\d.]+)(B|KB|MB|GB)/.exec(stdout);
    const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
    const result: WrkResult = {
      requests,
      seconds,
      requestsPerSec: number(/Requests\/sec:\s+([\d.]+)/),
      bytesPerSec: transfer ? Number(transfer[1]) * (UNITS[transfer[2] as string] ?? 1) : Number.NaN,
      non2xx: number(/Non-2xx or 3xx responses: (\d+)/) || 0,
      socketErrors: errors ? errors.slice(1).reduce((s, v) => s + Number(v), 0) : 0,
      errorDetail: errors?.[0] ?? '',
    };
    if (!Number.isFinite(result.requestsPerSec) || !Number.isFinite(result.bytesPerSec)) throw new Error(`unreadable wrk output: ${stdout}`);
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU time (user + system, µs) of a process and its children (nginx: the master and its workers), from /proc. */
export function processTreeCpuUs(pid: number): number {
  const tick = 1_000_000 / 100; // USER_HZ is 100 on Linux
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the command name (which may hold spaces), from its closing parenthesis: state, ppid, ... utime (14), stime (15).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(fields[1]);
    if (Number(entry) === pid || ppid === pid) total += (Number(fields[11]) + Number(fields[12])) * tick;
  }
  return total;
}
