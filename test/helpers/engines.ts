import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openStorage, type Engine, type Storage } from '../../src/platform/db/database.js';
import { migrations } from '../../src/migrations.js';

export const requireServices = process.env.PLAYLINE_REQUIRE_SERVICES === '1';
export const testDatabaseUrl = process.env.PLAYLINE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * How long a service probe (PostgreSQL connect, Redis PING) may take: a hang guard, not a speed
 * check. A service that is not running refuses at once (ECONNREFUSED), so the bound costs nothing
 * then; a running one on a loaded machine took more than the old 10 s and voided whole files.
 */
export const serviceProbeMs = Number(process.env.PLAYLINE_TEST_PROBE_MS ?? 120_000);

let postgresReachable: Promise<string | null> | undefined;

/** Null when PostgreSQL answers; otherwise why not. */
export function postgresProblem(): Promise<string | null> {
  postgresReachable ??= (async () => {
    const client = new pg.Client({ connectionString: testDatabaseUrl, connectionTimeoutMillis: serviceProbeMs });
    try {
      await client.connect();
      await client.query('select 1');
      return null;
    } catch (err) {
      return `PostgreSQL not reachable at ${testDatabaseUrl}: ${(err as Error).message}`;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return postgresReachable;
}

export interface TestStorage {
  storage: Storage;
  /** For PostgreSQL: the schema the test owns; for SQLite: the data directory. */
  databaseUrl?: string;
  pgSchema?: string;
  dataDir: string;
  cleanup(): Promise<void>;
}

export interface EngineCase {
  engine: Engine;
  /** A reason to skip (service missing and not required), or false. */
  skip: string | false;
  open(): Promise<TestStorage>;
}

/**
 * The engines every storage test runs on: SQLite always, PostgreSQL when reachable.
 * With PLAYLINE_REQUIRE_SERVICES=1 a missing PostgreSQL fails the run instead of skipping.
 */
export async function testEngines(): Promise<EngineCase[]> {
  const problem = await postgresProblem();
  if (problem && requireServices) throw new Error(`${problem} (PLAYLINE_REQUIRE_SERVICES=1)`);
  if (problem) console.log(`# SKIP PostgreSQL tests: ${problem}`);
  return [
    { engine: 'sqlite', skip: false, open: () => openSqliteForTest() },
    { engine: 'postgres', skip: problem ?? false, open: () => openPostgresForTest() },
  ];
}

export async function openSqliteForTest(): Promise<TestStorage> {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-test-'));
  const storage = await openStorage({ dataDir, migrations });
  return {
    storage,
    dataDir,
    async cleanup() {
      await storage.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A schema of its own with every migration run. Opening is tried a second time, after a pause,
 * when the first try fails (the error is printed as a TAP comment): CI once saw one test file's
 * open fail among a thousand on a loaded machine, and a passing second try tells a blip of the
 * shared server from a fault of ours (which fails both).
 */
export async function openPostgresForTest(): Promise<TestStorage> {
  try {
    return await openPostgresOnce();
  } catch (err) {
    console.log(`# opening a PostgreSQL test schema failed, trying once more: ${String(err)}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return openPostgresOnce();
  }
}

async function openPostgresOnce(): Promise<TestStorage> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-test-'));
  const storage = await openStorage({ databaseUrl: testDatabaseUrl, dataDir, pgSchema: schema, migrations }).catch(async (err: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    await dropSchema(schema).catch(() => undefined);
    throw err;
  });
  return {
    storage,
    databaseUrl: testDatabaseUrl,
    pgSchema: schema,
    dataDir,
    async cleanup() {
      await storage.close();
      await dropSchema(schema);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await client.end();
  }
}
