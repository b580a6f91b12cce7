import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from './config.js';

const pg = 'postgres://postgres@127.0.0.1:5432/playline';
const redis = 'redis://127.0.0.1:6379';

test('cluster mode needs both PostgreSQL and Redis: one alone is a clear configuration error', () => {
  assert.throws(() => loadConfig({ PLAYLINE_DATABASE_URL: pg }), (err: unknown) => {
    assert.ok(err instanceof ConfigError, 'a ConfigError');
    assert.match(err.message, /PLAYLINE_DATABASE_URL \(--database-url\) is set but PLAYLINE_REDIS_URL \(--redis-url\) is not/);
    return true;
  });
  assert.throws(() => loadConfig({}, { redisUrl: redis }), /PLAYLINE_REDIS_URL \(--redis-url\) is set but PLAYLINE_DATABASE_URL/);
});

test('both set is cluster mode, neither is the embedded default; the key prefix is checked', () => {
  const cluster = loadConfig({ PLAYLINE_DATABASE_URL: pg, PLAYLINE_REDIS_URL: redis });
  assert.deepEqual([cluster.databaseUrl, cluster.redisUrl, cluster.redisPrefix, cluster.slicerLeaseMs], [pg, redis, 'playline:', 30000]);
  const embedded = loadConfig({});
  assert.deepEqual([embedded.databaseUrl, embedded.redisUrl], [undefined, undefined]);
  assert.equal(loadConfig({ PLAYLINE_DATABASE_URL: pg, PLAYLINE_REDIS_URL: redis, PLAYLINE_REDIS_PREFIX: 'acme:prod:' }).redisPrefix, 'acme:prod:');
  assert.throws(() => loadConfig({ PLAYLINE_REDIS_PREFIX: 'has space' }), /PLAYLINE_REDIS_PREFIX/);
});
