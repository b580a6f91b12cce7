import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PlaylineClient } from '../../src/client/index.js';
import { postgresProblem, requireServices, testDatabaseUrl } from './engines.js';
import { dedicatedRedisUrl, deleteKeys, redisProblem, testRedis, testRedisUrl } from './redis.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

export const CLUSTER_ADMIN_TOKEN = 'cluster-admin-token-0123456789';
/** The one secret key of the test cluster: every instance and CLI call on its database needs it. */
export const CLUSTER_SECRET_KEY = Buffer.alloc(32, 9).toString('base64');

export interface ClusterFixture {
  /** A reason to skip (PostgreSQL or Redis missing and not required), or false. */
  skip: string | false;
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  /** The media directory every instance shares (PLAYLINE_MEDIA_DIR). */
  mediaDir: string;
  /** The workspace and API key created through the first instance started. */
  owner: string;
  apiKey: string;
  /** Starts one more instance (`playline serve` on a free port) of the cluster. */
  start(env?: Record<string, string>): Promise<ServerProcess>;
  client(server: ServerProcess): PlaylineClient;
  /** An admin API call (bearer token); resolves with status and parsed body. */
  admin(server: ServerProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  cleanup(): Promise<void>;
}

/**
 * A cluster of real server processes for e2e tests: a database of its own (created, then
 * dropped), Redis under a unique key prefix, or a whole dedicated Redis DB index when the test
 * flushes it (`redisDb`). Skips visibly without PostgreSQL or Redis unless they are required.
 */
export async function clusterFixture(options: { redisDb?: number; env?: Record<string, string> } = {}): Promise<ClusterFixture> {
  const problem = (await postgresProblem()) ?? (await redisProblem());
  if (problem && requireServices) throw new Error(`${problem} (PLAYLINE_REQUIRE_SERVICES=1)`);
  if (problem) console.log(`# SKIP cluster e2e tests: ${problem}`);
  const name = `playline_e2e_${randomBytes(5).toString('hex')}`;
  const databaseUrl = Object.assign(new URL(testDatabaseUrl), { pathname: `/${name}` }).toString();
  const redisUrl = options.redisDb === undefined ? testRedisUrl : dedicatedRedisUrl(options.redisDb);
  const redis = await testRedis();
  const redisPrefix = options.redisDb === undefined ? redis.prefix() : 'playline:';
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-cluster-e2e-'));
  const servers: ServerProcess[] = [];
  const fixture: ClusterFixture = {
    skip: problem ?? false,
    databaseUrl,
    redisUrl,
    redisPrefix,
    mediaDir: join(dataDir, 'media'),
    owner: '',
    apiKey: '',
    async start(env = {}) {
      const server = await startServerProcess({
        PLAYLINE_DATA_DIR: dataDir,
        PLAYLINE_DATABASE_URL: databaseUrl,
        PLAYLINE_REDIS_URL: redisUrl,
        PLAYLINE_REDIS_PREFIX: redisPrefix,
        PLAYLINE_SECRET_KEY: CLUSTER_SECRET_KEY,
        PLAYLINE_ADMIN_TOKEN: CLUSTER_ADMIN_TOKEN,
        // Cluster mode with ffmpeg present needs one media directory shared by every instance.
        PLAYLINE_MEDIA_DIR: fixture.mediaDir,
        ...options.env,
        ...env,
      });
      servers.push(server);
      if (fixture.owner === '') {
        const workspace = (await fixture.admin(server, 'POST', '/api/v4/admin/workspaces', { name: 'Cluster e2e' })).body as { id: string };
        const key = (await fixture.admin(server, 'POST', `/api/v4/admin/workspaces/${workspace.id}/keys`, { label: 'e2e' })).body as { secret: string };
        fixture.owner = workspace.id;
        fixture.apiKey = key.secret;
      }
      return server;
    },
    client: (server) => new PlaylineClient({ baseUrl: server.url, owner: fixture.owner, apiKey: fixture.apiKey }),
    async admin(server, method, path, body) {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${CLUSTER_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
    },
    async cleanup() {
      for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) await server.kill9();
      if (!problem) {
        await withAdminClient((client) => client.query(`drop database if exists ${name} with (force)`));
        if (options.redisDb !== undefined) await deleteKeys(redis.client(redisUrl), `${redisPrefix}*`);
      }
      await redis.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  if (!problem) await withAdminClient((client) => client.query(`create database ${name}`));
  return fixture;
}

/** Runs `fn` on a short-lived client of the test server's admin database (create/drop databases). */
export const withAdminClient = async (fn: (client: pg.Client) => Promise<unknown>): Promise<void> => {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.end();
  }
};

/** Polls `read` until `accept` holds (real I/O between processes); bounded, asserts no duration. */
export async function pollUntil<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string, deadlineMs = 30_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await read();
    if (accept(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never reached: ${what}; last seen ${JSON.stringify(last)}`);
}
