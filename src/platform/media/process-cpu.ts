import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/**
 * Clock ticks per second of the times in `/proc/<pid>/stat` (USER_HZ). The kernel reports these
 * times in USER_HZ, fixed at 100 on every Linux architecture Node runs on, whatever CONFIG_HZ is.
 */
const USER_HZ = 100;

/** Whether this system reports the CPU time of another process (Linux `/proc`). */
export const processCpuReadable = existsSync('/proc/self/stat');

/**
 * CPU seconds (user + system, every thread) a running process has used so far, read from
 * `/proc/<pid>/stat`; undefined once it is gone (or where there is no `/proc`).
 *
 * Why this source: it is the kernel's own count for a child that still runs, so a budget on it
 * ends a run that does too much work, while a run that only waits for a CPU on a loaded machine
 * spends nothing. `process.cpuUsage()` counts this process only, and `getrusage(RUSAGE_CHILDREN)`
 * counts a child only once it has been reaped: neither can stop a run midway.
 */
export async function processCpuSeconds(pid: number): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // Field 3 (state) is fields[0]; utime (14) and stime (15) follow.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / USER_HZ : undefined;
}
