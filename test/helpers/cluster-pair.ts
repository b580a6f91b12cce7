import { join } from 'node:path';
import { postgresProblem, requireServices, openPostgresForTest, type TestStorage } from './engines.js';
import { redisProblem, testRedis, type TestRedis } from './redis.js';
import { createTestApp, type TestApp, type TestAppOptions } from './test-app.js';
import { randomIds } from '../../src/platform/ids.js';

/** Why cluster-mode tests in process cannot run (PostgreSQL or Redis missing and not required), or false. */
export async function clusterPairProblem(): Promise<string | false> {
  const problem = (await postgresProblem()) ?? (await redisProblem());
  if (problem && requireServices) throw new Error(`${problem} (PLAYLINE_REQUIRE_SERVICES=1)`);
  if (problem) console.log(`# SKIP in-process cluster tests: ${problem}`);
  return problem ?? false;
}

export interface ClusterPair {
  /** Two instances of one cluster deployment in this process: one PostgreSQL schema, one Redis prefix. */
  a: TestApp;
  b: TestApp;
  /** Starts one more instance of the same deployment (closed with the pair). */
  join(): Promise<TestApp>;
  close(): Promise<void>;
}

/**
 * Two cluster-mode test apps (each with its own workspace, both in the shared database), for
 * what must hold across instances. Lighter than `clusterFixture` (no server processes).
 */
export async function clusterPair(options: Pick<TestAppOptions, 'env' | 'overrides'> = {}): Promise<ClusterPair> {
  const redis: TestRedis = await testRedis();
  const storage: TestStorage = await openPostgresForTest();
  const shared = { ...storage, cleanup: () => Promise.resolve() };
  // Cluster mode with ffmpeg present needs one media directory shared by every instance.
  const env = { PLAYLINE_MEDIA_DIR: join(storage.dataDir, 'media'), ...options.env, PLAYLINE_REDIS_URL: redis.url, PLAYLINE_REDIS_PREFIX: redis.prefix() };
  const open = () => createTestApp({ storage: shared, env, ids: randomIds, ...(options.overrides ? { overrides: options.overrides } : {}) });
  const a = await open();
  const b = await open();
  const joined: TestApp[] = [];
  return {
    a,
    b,
    async join() {
      const instance = await open();
      joined.push(instance);
      return instance;
    },
    async close() {
      for (const instance of joined.reverse()) await instance.close();
      await b.close();
      await a.close();
      await storage.cleanup();
      await redis.cleanup();
    },
  };
}
