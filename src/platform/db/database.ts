import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Migration } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { SQLITE_FILE } from './sqlite-file.js';

export type Db = Kysely<Database>;
export type Engine = 'sqlite' | 'postgres';

/** The resource store: one Kysely instance over SQLite (embedded) or PostgreSQL (cluster). */
export interface Storage {
  readonly db: Db;
  readonly engine: Engine;
  /** Throws when the database cannot be reached (used by /readyz). */
  ping(): Promise<void>;
  /**
   * Writes (and removes) a little fresh data where the service writes: a database row and, in
   * the embedded mode, a file in the data directory. Throws the engine's error when it cannot
   * (readiness uses it to see whether a full disk has space again).
   */
  probeWrite(): Promise<void>;
  close(): Promise<void>;
}

// bigint columns hold millisecond times and counters well inside 2^53: read them as numbers.
pg.types.setTypeParser(20, (value) => Number(value));

export { SQLITE_FILE };

export interface StorageOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** PostgreSQL schema to use (tests isolate themselves in one); default `public`. */
  pgSchema?: string;
  /** SQLite file name inside dataDir, or ':memory:'. */
  sqliteFile?: string;
  /** Every migration, by name (the composition root gathers the foundation's and each module's: src/migrations.ts). */
  migrations: Record<string, Migration>;
}

export async function openStorage(options: StorageOptions): Promise<Storage> {
  const storage = options.databaseUrl ? openPostgres(options.databaseUrl, options.pgSchema) : openSqlite(options);
  try {
    await migrate(storage.db, options.migrations, options.databaseUrl ? options.pgSchema : undefined);
  } catch (err) {
    await storage.close();
    throw err;
  }
  return storage;
}

function openSqlite(options: StorageOptions): Storage {
  const file = options.sqliteFile ?? SQLITE_FILE;
  let path = file;
  if (file !== ':memory:') {
    mkdirSync(options.dataDir, { recursive: true });
    path = join(options.dataDir, file);
  }
  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  // WAL + NORMAL: a committed transaction survives a process crash (kill -9); only an OS crash
  // or power loss can lose the last commits before a checkpoint.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return {
    db,
    engine: 'sqlite',
    async ping() {
      sqlite.prepare('select 1').get();
    },
    async probeWrite() {
      await probeRow(db);
      if (file !== ':memory:') await probeFile(options.dataDir);
    },
    close: () => db.destroy(),
  };
}

/**
 * Kysely prepares every query anew; preparing costs more than running a small query, so each
 * distinct SQL text is prepared once and reused (Kysely runs one query at a time on this
 * connection, so a statement is never in use twice). Bounded: the oldest is dropped.
 */
function withStatementCache(sqlite: SQLite.Database, max = 1000) {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (!statement) {
        statement = sqlite.prepare(text);
        if (statements.size >= max) statements.delete(statements.keys().next().value as string);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}

function openPostgres(url: string, schema?: string): Storage {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    engine: 'postgres',
    async ping() {
      await sql`select 1`.execute(db);
    },
    probeWrite: () => probeRow(db),
    close: () => db.destroy(),
  };
}

/** Big enough to need fresh pages or blocks, small enough to cost nothing. */
const PROBE_BYTES = 64 * 1024;

async function probeRow(db: Db): Promise<void> {
  const name = `write_probe:${randomUUID()}`;
  await db.insertInto('deployment_checks').values({ name, value: 'x'.repeat(PROBE_BYTES), created_at: Date.now() }).execute();
  await db.deleteFrom('deployment_checks').where('name', '=', name).execute();
}

async function probeFile(dir: string): Promise<void> {
  const path = join(dir, `.write-probe-${randomUUID()}`);
  const handle = await open(path, 'wx');
  try {
    await handle.write(Buffer.alloc(PROBE_BYTES, 0x78));
    await handle.datasync();
  } finally {
    await handle.close();
    await unlink(path).catch(() => undefined);
  }
}

async function migrate(db: Db, migrations: Record<string, Migration>, pgSchema: string | undefined): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Without it Kysely looks for its migration tables in every schema, so another schema's
    // tables (another test, another tenant) would be taken for ours.
    ...(pgSchema ? { migrationTableSchema: pgSchema } : {}),
    // Numbers are ranges per module (src/migrations.ts): a new foundation or module migration
    // sorts before ones a database already ran, and must still run.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`Database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`, { cause: error });
  }
}
