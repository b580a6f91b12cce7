import { Command } from 'commander';
import { printObject } from './output.js';
import { addSettingOptions, configFrom, requirePlaylineData } from './storage-options.js';

const embeddedOnly = (databaseUrl: string | undefined) => {
  if (databaseUrl !== undefined) {
    throw new Error('backup and restore are for the embedded mode; in cluster mode back up PostgreSQL (pg_dump) and the shared media directory (Redis statistics are rebuilt from the journal)');
  }
};

/** `playline backup <dir>`: the embedded data directory, consistently, also while the server runs. */
export function backupCommand(): Command {
  return addSettingOptions(
    new Command('backup')
      .description('Back up the embedded data directory (also while the server runs): database, statistics journal and snapshots, secret key file, media')
      .argument('<dir>', 'a new or empty directory to write the backup into')
      .option('--json', 'print the backup manifest as JSON')
      .addHelpText('after', `
The database is copied with SQLite's online backup, the statistics journal as of one moment, and
backup.json (written last) lists every file with its SHA-256. With PLAYLINE_SECRET_KEY set (no key
file), keep that key: the backup is unreadable without it. Restore with: playline restore <dir> --data-dir <new dir>`),
    ['dataDir', 'databaseUrl', 'secretKey'],
  ).action(async (dir: string, opts: Record<string, unknown>) => {
    const config = configFrom(opts);
    embeddedOnly(config.databaseUrl);
    requirePlaylineData(config);
    // Loaded on use, like the runtime (storage-options.ts): the other commands start without them.
    const [{ backupDataDir }, { VERSION }] = await Promise.all([import('../platform/backup/data-dir-backup.js'), import('../app.js')]);
    const manifest = await backupDataDir({ dataDir: config.dataDir, target: dir, secretKeyFromSetting: config.secretKey !== undefined, version: VERSION });
    if (opts.json === true) {
      printObject({ ...manifest }, true);
      return;
    }
    const bytes = manifest.files.reduce((n, f) => n + f.bytes, 0);
    printObject({ backup: dir, source: manifest.source, files: manifest.files.length, bytes, secret_key: manifest.secret_key_included ? 'included (secret.key)' : 'NOT included: keep PLAYLINE_SECRET_KEY' }, false);
  });
}

/** `playline restore <dir>`: a backup onto a new data directory, never over existing data. */
export function restoreCommand(): Command {
  return addSettingOptions(
    new Command('restore')
      .description('Restore a backup onto a new or empty data directory (never over existing data)')
      .argument('<dir>', 'the backup (a directory written by playline backup)')
      .option('--json', 'print the restored manifest as JSON'),
    ['dataDir'],
  ).action(async (dir: string, opts: Record<string, unknown>) => {
    const config = configFrom(opts);
    const { restoreDataDir } = await import('../platform/backup/data-dir-backup.js');
    const manifest = await restoreDataDir(dir, config.dataDir);
    if (opts.json === true) {
      printObject({ ...manifest, data_dir: config.dataDir }, true);
      return;
    }
    printObject({ restored: dir, data_dir: config.dataDir, files: manifest.files.length, backed_up_at: manifest.created_at }, false);
    process.stderr.write(`Start it with: playline serve --data-dir ${config.dataDir}${manifest.secret_key_included ? '' : ' (with the PLAYLINE_SECRET_KEY of the backed-up server)'}\n`);
  });
}
