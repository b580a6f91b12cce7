import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Hands text to a media tool through a named pipe (mode 0600 in a fresh 0700 directory), for
 * values that must stay off the command line and off the disk (ffmpeg reads `-fpre <path>`).
 * Node's stdio pipes are socket pairs, which `/dev/stdin` cannot open, hence a FIFO: the text
 * is written once the tool opens it for reading, then the write end closes, so the tool reads
 * it to its end. `close()` removes the pipe (after the tool ran, or when it never read it).
 */
export interface SecretFifo {
  readonly path: string;
  /** Resolves true once the text was written to a reader, false when `close()` came first. */
  readonly delivered: Promise<boolean>;
  close(): Promise<void>;
}

export async function secretFifo(text: string): Promise<SecretFifo> {
  const dir = await mkdtemp(join(tmpdir(), 'playline-fifo-'));
  const path = join(dir, 'options');
  await run('mkfifo', ['-m', '600', path]);
  let closed = false;
  const delivered = (async () => {
    while (!closed) {
      try {
        // Non-blocking: fails with ENXIO until a reader has the pipe open.
        const handle = await open(path, constants.O_WRONLY | constants.O_NONBLOCK);
        try {
          await handle.write(text);
        } finally {
          await handle.close();
        }
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENXIO') return false;
        await delay(10);
      }
    }
    return false;
  })();
  return {
    path,
    delivered,
    async close() {
      closed = true;
      await delivered;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
