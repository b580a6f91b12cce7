import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { chmod, copyFile, mkdir, open, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import SQLite from 'better-sqlite3';
import { SQLITE_FILE } from '../db/database.js';

/** The file that makes a directory a complete backup; written last. */
export const MANIFEST = 'backup.json';
export const BACKUP_FORMAT = 1;
/** The statistics journal and snapshots, inside the data directory. */
const JOURNAL_DIR = 'vod-stats';

export interface BackupFile {
  /** Relative to the data directory, with forward slashes. */
  path: string;
  bytes: number;
  sha256: string;
}

export interface BackupManifest {
  format: number;
  playline_version: string;
  created_at: string;
  source: string;
  /** False when the secret key came from PLAYLINE_SECRET_KEY: the backup then needs that key to be used. */
  secret_key_included: boolean;
  files: BackupFile[];
}

/** Not data: SQLite's side files (the backup API copies the database whole), locks, temp and probe files. */
const SKIPPED = (name: string): boolean =>
  name === `${SQLITE_FILE}-wal` || name === `${SQLITE_FILE}-shm` || name === `${SQLITE_FILE}-journal` || /^LOCK$|\.lock$|\.pid$|\.tmp$|^\.write-probe-/.test(name);

const toPosix = (path: string): string => path.split(sep).join('/');

const sha256Of = (path: string): Promise<string> =>
  new Promise((resolvePromise, reject) => {
    const hash = createHash('sha256');
    createReadStream(path).on('data', (chunk) => hash.update(chunk)).on('error', reject).on('end', () => resolvePromise(hash.digest('hex')));
  });

/** Every file under `dir` (recursively), relative paths, skipping what `skip` names (files or folders). */
async function filesUnder(dir: string, skip: (relativePath: string, name: string) => boolean): Promise<string[]> {
  const found: string[] = [];
  const walk = async (at: string) => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      const rel = relative(dir, full);
      if (skip(rel, entry.name)) continue;
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) found.push(rel);
    }
  };
  await walk(dir);
  return found.sort();
}

/** An empty directory to write into: created if missing; refused if it holds anything. */
async function emptyDirectory(dir: string, what: string): Promise<void> {
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (entries !== null && entries.length > 0) throw new Error(`${resolve(dir)} is not empty: ${what}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
}

/** The real path of `path` even if it does not exist yet: its nearest existing ancestor's real path, then the rest. */
async function realPathOf(path: string): Promise<string> {
  const absolute = resolve(path);
  try {
    return await realpath(absolute);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(absolute) === absolute) throw err;
    return join(await realPathOf(dirname(absolute)), basename(absolute));
  }
}

/**
 * A backup inside the data directory would copy itself into the next backup (and the one after
 * that copies both): refused, however the target is spelled (`..`, a symlink to a folder inside).
 */
export async function assertOutsideDataDir(dataDir: string, target: string): Promise<void> {
  const data = await realPathOf(dataDir);
  const into = await realPathOf(target);
  if (into === data || into.startsWith(`${data}${sep}`)) {
    throw new Error(`${resolve(target)} is inside the data directory ${data}: back up into a directory outside it (a backup inside would be copied into every later backup)`);
  }
}

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Copies the first `bytes` of `from` (a journal segment may grow meanwhile: its prefix is a consistent journal). */
async function copyPrefix(from: string, to: string, bytes: number): Promise<void> {
  const source = await open(from, 'r');
  try {
    const target = await open(to, 'wx', 0o600);
    try {
      const buffer = Buffer.alloc(Math.min(bytes, 1 << 20));
      for (let at = 0; at < bytes; ) {
        const { bytesRead } = await source.read(buffer, 0, Math.min(buffer.length, bytes - at), at);
        if (bytesRead === 0) throw new Error(`${from} shrank while it was copied`);
        await target.write(buffer, 0, bytesRead);
        at += bytesRead;
      }
      await target.sync();
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/**
 * The statistics journal as of one moment, while a server may be writing it: the files listed
 * with their sizes, each copied up to that size (segments only grow; a snapshot never changes
 * once in place). A file that disappears meanwhile (a snapshot made older files redundant and
 * they were deleted) means the listing is stale: start again from a fresh listing.
 */
async function copyJournal(dataDir: string, target: string): Promise<string[]> {
  const dir = join(dataDir, JOURNAL_DIR);
  if ((await stat(dir).catch(() => null)) === null) return [];
  for (let attempt = 1; ; attempt++) {
    let listed: { name: string; bytes: number }[];
    try {
      const names = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile() && !SKIPPED(e.name)).map((e) => e.name);
      listed = await Promise.all(names.map(async (name) => ({ name, bytes: (await stat(join(dir, name))).size })));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 10) throw err;
      continue;
    }
    const out = join(target, JOURNAL_DIR);
    await rm(out, { recursive: true, force: true });
    await mkdir(out, { recursive: true, mode: 0o700 });
    try {
      for (const { name, bytes } of listed) await copyPrefix(join(dir, name), join(out, name), bytes);
      return listed.map(({ name }) => `${JOURNAL_DIR}/${name}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 10) throw err;
    }
  }
}

export interface BackupOptions {
  dataDir: string;
  target: string;
  /** Whether the secret key comes from PLAYLINE_SECRET_KEY rather than the data directory's key file. */
  secretKeyFromSetting: boolean;
  version: string;
  now?: () => Date;
}

/**
 * Backs up an embedded data directory, also while its server runs: the SQLite database through
 * SQLite's online backup (a consistent copy whatever is being written), the statistics journal
 * and snapshots as of one moment (see copyJournal), the secret key file and every other file
 * (the media directory included), then `backup.json` listing every file with its SHA-256.
 */
export async function backupDataDir(options: BackupOptions): Promise<BackupManifest> {
  const { dataDir, target } = options;
  await assertOutsideDataDir(dataDir, target);
  await emptyDirectory(target, 'back up into a new or empty directory');
  const database = new SQLite(join(dataDir, SQLITE_FILE), { fileMustExist: true });
  try {
    database.pragma('busy_timeout = 5000');
    await database.backup(join(target, SQLITE_FILE));
  } finally {
    database.close();
  }
  await chmod(join(target, SQLITE_FILE), 0o600);
  const copied = [SQLITE_FILE, ...(await copyJournal(dataDir, target))];
  const rest = await filesUnder(dataDir, (rel, name) => rel === SQLITE_FILE || rel === JOURNAL_DIR || SKIPPED(name));
  for (const rel of rest) {
    await mkdir(dirname(join(target, rel)), { recursive: true, mode: 0o700 });
    await copyFile(join(dataDir, rel), join(target, rel), constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    copied.push(toPosix(rel));
  }
  const files: BackupFile[] = [];
  for (const path of copied.sort()) {
    const full = join(target, path);
    await syncFile(full);
    files.push({ path, bytes: (await stat(full)).size, sha256: await sha256Of(full) });
  }
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    playline_version: options.version,
    created_at: (options.now ?? (() => new Date()))().toISOString(),
    source: resolve(dataDir),
    secret_key_included: !options.secretKeyFromSetting && files.some((f) => f.path === 'secret.key'),
    files,
  };
  await writeFile(join(target, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  await syncFile(join(target, MANIFEST));
  return manifest;
}

/**
 * Restores a backup onto a new (or empty) data directory, never over existing data: checks
 * every file against the manifest (size and SHA-256) before copying anything, then copies.
 */
export async function restoreDataDir(backupDir: string, target: string): Promise<BackupManifest> {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(await readFile(join(backupDir, MANIFEST), 'utf8')) as BackupManifest;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`${resolve(backupDir)} is not a complete Playline backup (no ${MANIFEST})`, { cause: err });
    throw new Error(`${join(resolve(backupDir), MANIFEST)} is not readable: ${(err as Error).message}`, { cause: err });
  }
  if (manifest.format !== BACKUP_FORMAT) throw new Error(`backup format ${manifest.format} is not one this version reads (${BACKUP_FORMAT})`);
  for (const file of manifest.files) {
    if (file.path.split('/').includes('..') || file.path.startsWith('/')) throw new Error(`backup lists an unsafe path: ${file.path}`);
    const full = join(backupDir, file.path);
    const size = (await stat(full).catch(() => null))?.size;
    if (size !== file.bytes || (await sha256Of(full)) !== file.sha256) throw new Error(`backup file ${file.path} is missing or damaged (size or SHA-256 differs from ${MANIFEST})`);
  }
  await emptyDirectory(target, 'restore refuses to overwrite existing data: give a new or empty --data-dir');
  try {
    for (const file of manifest.files) {
      const to = join(target, file.path);
      await mkdir(dirname(to), { recursive: true, mode: 0o700 });
      await copyFile(join(backupDir, file.path), to, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
      if (file.path === 'secret.key' || file.path === SQLITE_FILE) await chmod(to, 0o600);
      await syncFile(to);
    }
  } catch (err) {
    // Leave no half-restored data directory behind.
    await rm(target, { recursive: true, force: true });
    throw err;
  }
  return manifest;
}
