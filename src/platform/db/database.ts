import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';

export type Db = Kysely<Database>;
export type Engine = 'sqlite' | 'postgres';

/** The resource store: one Kysely instance over SQLite (embedded) or PostgreSQL (cluster). */
export interface Storage {
  readonly db: Db;
  readonly engine: Engine;
  /** Throws when the database cannot be reached (used by /readyz). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// bigint columns hold millisecond times and counters well inside 2^53: read them as numbers.
pg.types.setTypeParser(20, (value) => Number(value));

export interface StorageOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** PostgreSQL schema to use (tests isolate themselves in one); default `public`. */
  pgSchema?: string;
  /** SQLite file name inside dataDir, or ':memory:'. */
  sqliteFile?: string;
}

export async function openStorage(options: StorageOptions): Promise<Storage> {
  const storage = options.databaseUrl ? openPostgres(options.databaseUrl, options.pgSchema) : openSqlite(options);
  try {
    await migrate(storage.db, options.databaseUrl ? options.pgSchema : undefined);
  } catch (err) {
    await storage.close();
    throw err;
  }
  return storage;
}

function openSqlite(options: StorageOptions): Storage {
  const file = options.sqliteFile ?? 'playline.db';
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
    close: () => db.destroy(),
  };
}

async function migrate(db: Db, pgSchema: string | undefined): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Without it Kysely looks for its migration tables in every schema, so another schema's
    // tables (another test, another tenant) would be taken for ours.
    ...(pgSchema ? { migrationTableSchema: pgSchema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`Database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`, { cause: error });
  }
}
