import { realpathSync, writeFileSync } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * A media process left behind by a server that died (`kill -9` does not reach its children:
 * ffmpeg would go on writing into a job's directory). Each job records its process in a marker
 * file; the next attempt kills it before it clears the directory. The marker names the host,
 * so an instance never signals a pid of another machine, a tag (the job's work directory)
 * that must appear on the process's command line, so a recycled pid is never killed, and the
 * directory the marker was written in: a marker is honoured only where it was written, so a copy
 * of the data (a restored backup, another data directory on the same host) never ends the
 * processes of the server it was copied from.
 */
interface ProcessMarker {
  host: string;
  pid: number;
  tag: string;
  /** The marker's directory, resolved, when it was written. */
  dir: string;
}

/**
 * Records a process in its marker file, synchronously (a few dozen bytes): called right after the
 * spawn, so no turn of the event loop (in which the server could be killed) separates the process
 * from its marker. Throws if the file cannot be written.
 */
export function writeProcessMarker(file: string, pid: number, tag: string): void {
  const marker: ProcessMarker = { host: hostname(), pid, tag, dir: realpathSync(dirname(file)) };
  writeFileSync(file, JSON.stringify(marker));
}

/** Whether `pid` runs (a zombie has finished) with `tag` on its command line; Linux /proc only. */
async function runsWithTag(pid: number, tag: string): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    if (/\)\s+Z\s/.test(stat)) return false;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes(tag);
  } catch {
    return false;
  }
}

/**
 * Kills the process a marker names if it still runs on this host with its tag, and waits (up
 * to 5 s) until it is gone. Returns whether a process was killed. Never throws.
 */
export async function killMarkedProcess(file: string): Promise<boolean> {
  let marker: ProcessMarker;
  try {
    marker = JSON.parse(await readFile(file, 'utf8')) as ProcessMarker;
  } catch {
    return false;
  }
  if (marker.host !== hostname() || !Number.isSafeInteger(marker.pid) || marker.pid <= 1 || typeof marker.tag !== 'string') return false;
  // Written elsewhere (copied with a backup): the process is another server's, not an orphan of ours.
  if (marker.dir !== (await realpath(dirname(file)).catch(() => undefined))) return false;
  if (!(await runsWithTag(marker.pid, marker.tag))) return false;
  try {
    process.kill(marker.pid, 'SIGKILL');
  } catch {
    return false;
  }
  for (let i = 0; i < 100 && (await runsWithTag(marker.pid, marker.tag)); i++) await delay(50);
  return true;
}
