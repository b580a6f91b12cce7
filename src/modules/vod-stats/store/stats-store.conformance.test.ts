import { after } from 'node:test';
import { testRedis } from '../../../../test/helpers/redis.js';
import { MemoryStatsStore } from './memory-stats-store.js';
import { RedisStatsStore } from './redis-stats-store.js';
import { statsStoreConformance } from './stats-store.conformance.test-support.js';

// One suite, both stores: the embedded one always, the Redis one when Redis is reachable.
statsStoreConformance('MemoryStatsStore (embedded)', async (clock, options) => ({
  store: new MemoryStatsStore({ clock, ...options }),
  close: async () => undefined,
}));

const redis = await testRedis();
after(() => redis.cleanup());

statsStoreConformance(
  'RedisStatsStore (cluster)',
  async (clock, options) => {
    const client = redis.client();
    return {
      store: new RedisStatsStore({ redis: client, clock, prefix: redis.prefix(), pruneMarginMs: 0, ...options }),
      close: async () => client.quit().then(() => undefined),
    };
  },
  redis.skip,
);
