import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';

/** The lock file: a SQLite database held in an exclusive transaction for as long as the journal is open. */
export const LOCK_FILE = 'journal.lock';
/** The holder's pid, for the message a second server gets (and for builds that read a pid file). */
export const PID_FILE = 'LOCK';

/**
 * One process per journal directory, with an operating-system lock that dies with its holder.
 * The lock is SQLite's exclusive lock on `journal.lock` (a POSIX advisory lock on the open
 * file, already a dependency of the embedded mode): the kernel releases it when the process
 * exits however it exits, so a killed server, a zombie or a recycled pid can never keep it,
 * while a live second server on the same directory is refused at once.
 */
export class JournalLock {
  private constructor(
    private readonly dir: string,
    private db: SQLite.Database | null,
  ) {}

  /** Takes the lock of `dir` (which must exist), or throws saying who holds it. */
  static acquire(dir: string): JournalLock {
    const db = new SQLite(join(dir, LOCK_FILE), { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
      const holder = readHolder(dir);
      throw new Error(
        `vod-stats journal ${dir} is in use by another running Playline server${holder ? ` (process ${holder})` : ''}; ` +
          'one server per data directory (stop it, or give this one its own PLAYLINE_DATA_DIR)',
        { cause: error },
      );
    }
    writeFileSync(join(dir, PID_FILE), `${process.pid}\n`);
    return new JournalLock(dir, db);
  }

  release(): void {
    if (this.db === null) return;
    rmSync(join(this.dir, PID_FILE), { force: true });
    this.db.close();
    this.db = null;
  }
}

const readHolder = (dir: string): string | undefined => {
  try {
    return readFileSync(join(dir, PID_FILE), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
};
