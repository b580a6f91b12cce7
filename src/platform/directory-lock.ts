import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';

/** The lock file: a SQLite database held in an exclusive transaction for as long as the lock is held. */
export const LOCK_FILE = 'journal.lock';
/** The holder's pid, for the message a second server gets (and for builds that read a pid file). */
export const PID_FILE = 'LOCK';

/**
 * One process per directory (the data directory of a server, the statistics journal), with an
 * operating-system lock that dies with its holder.
 * The lock is SQLite's exclusive lock on `journal.lock` (a POSIX advisory lock on the open
 * file, already a dependency of the embedded mode): the kernel releases it when the process
 * exits however it exits, so a killed server, a zombie or a recycled pid can never keep it,
 * while a live second server on the same directory is refused at once.
 */
export class DirectoryLock {
  private constructor(
    private readonly pidPath: string,
    private db: SQLite.Database | null,
  ) {}

  /** Takes the lock of `dir` (which must exist), or throws saying who holds it; `what` names the directory in that message. */
  static acquire(dir: string, what = `vod-stats journal ${dir}`, files: { lock: string; pid: string } = { lock: LOCK_FILE, pid: PID_FILE }): DirectoryLock {
    const db = new SQLite(join(dir, files.lock), { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
      const holder = readHolder(join(dir, files.pid));
      throw new Error(
        `${what} is in use by another running Playline server${holder ? ` (process ${holder})` : ''}; ` +
          'one server per data directory (stop it, or give this one its own PLAYLINE_DATA_DIR)',
        { cause: error },
      );
    }
    writeFileSync(join(dir, files.pid), `${process.pid}\n`);
    return new DirectoryLock(join(dir, files.pid), db);
  }

  release(): void {
    if (this.db === null) return;
    rmSync(this.pidPath, { force: true });
    this.db.close();
    this.db = null;
  }
}

const readHolder = (pidPath: string): string | undefined => {
  try {
    return readFileSync(pidPath, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
};
