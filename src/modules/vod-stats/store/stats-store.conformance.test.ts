import { after } from 'node:test';
import { testRedis } from '../../../../test/helpers/redis.js';
import { MemoryStatsStore } from './memory-stats-store.js';
import { RedisStatsStore } from './redis-stats-store.js';
import { statsStoreConformance } from './stats-store.conformance.test-support.js';

// One suite, both stores: the embedded one always, the Redis one when Redis is reachable.
statsStoreConformance('MemoryStatsStore (embedded)', async (clock, options) => {
  const store = new MemoryStatsStore({ clock, ...options });
  return {
    store,
    close: async () => undefined,
    // A restart restores the latest snapshot (the journal replay after it is the ingest's part).
    restart: async () => {
      const again = new MemoryStatsStore({ clock, ...options });
      again.restoreSnapshot([...store.snapshotLines()]);
      return again;
    },
  };
});

const redis = await testRedis();
after(() => redis.cleanup());

statsStoreConformance(
  'RedisStatsStore (cluster)',
  async (clock, options) => {
    const client = redis.client();
    const prefix = redis.prefix();
    const make = () => new RedisStatsStore({ redis: client, clock, prefix, pruneMarginMs: 0, ...options });
    return {
      store: make(),
      close: async () => client.quit().then(() => undefined),
      // A restarted instance finds the same keys in Redis.
      restart: async () => make(),
    };
  },
  redis.skip,
);
