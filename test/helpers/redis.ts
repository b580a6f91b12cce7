import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { requireServices, serviceProbeMs } from './engines.js';

/** The shared Redis of the test machine (DB 0). Tests isolate themselves by key prefix. */
export const testRedisUrl = process.env.PLAYLINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A Redis database index only one test file may use, for tests that must FLUSHALL/FLUSHDB
 * (never flush the shared DB 0). Each index is owned by one file; see where they are used. Two
 * checkouts testing against one Redis at once give each a Redis of its own (PLAYLINE_TEST_REDIS_URL)
 * or move the dedicated indexes apart with PLAYLINE_TEST_REDIS_DB_OFFSET (added to the index).
 */
export const dedicatedRedisUrl = (db: number): string => {
  const url = new URL(testRedisUrl);
  url.pathname = `/${db + Number(process.env.PLAYLINE_TEST_REDIS_DB_OFFSET ?? 0)}`;
  return url.toString();
};

let reachable: Promise<string | null> | undefined;

/** Null when Redis answers PING; otherwise why not. */
export function redisProblem(): Promise<string | null> {
  reachable ??= (async () => {
    const client = new Redis(testRedisUrl, { lazyConnect: true, connectTimeout: serviceProbeMs, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      return null;
    } catch (err) {
      return `Redis not reachable at ${testRedisUrl}: ${(err as Error).message}`;
    } finally {
      client.disconnect();
    }
  })();
  return reachable;
}

export interface TestRedis {
  /** A reason to skip (Redis missing and not required), or false. */
  skip: string | false;
  url: string;
  /** A key prefix no other test uses (`t:<random>:`); its keys are deleted by `cleanup`. */
  prefix(): string;
  /** A connected client on `url` (or another URL), closed by `cleanup`. */
  client(url?: string): Redis;
  /** Deletes every key under the prefixes handed out and closes the clients. */
  cleanup(): Promise<void>;
}

/**
 * Redis for a test file: skipped with a visible `# SKIP` line when unreachable, a failure under
 * PLAYLINE_REQUIRE_SERVICES=1 (CI). Use a fresh `prefix()` per test; never FLUSHALL DB 0.
 */
export async function testRedis(): Promise<TestRedis> {
  const problem = await redisProblem();
  if (problem && requireServices) throw new Error(`${problem} (PLAYLINE_REQUIRE_SERVICES=1)`);
  if (problem) console.log(`# SKIP Redis tests: ${problem}`);
  const prefixes: string[] = [];
  const clients: Redis[] = [];
  const client = (url = testRedisUrl): Redis => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 });
    clients.push(redis);
    return redis;
  };
  return {
    skip: problem ?? false,
    url: testRedisUrl,
    prefix() {
      const prefix = `t:${randomBytes(6).toString('hex')}:`;
      prefixes.push(prefix);
      return prefix;
    },
    client,
    async cleanup() {
      if (prefixes.length > 0 && !problem) {
        const redis = client();
        for (const prefix of prefixes) await deleteKeys(redis, `${prefix}*`);
      }
      for (const redis of clients) redis.disconnect();
      clients.length = 0;
    },
  };
}

/** Deletes the keys matching `pattern` (SCAN, never KEYS). */
export async function deleteKeys(redis: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}
