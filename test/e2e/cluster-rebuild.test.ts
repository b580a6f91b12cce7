import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import type { PlaybackEventInput } from '../../src/client/vod-stats.js';
import { CLUSTER_ADMIN_TOKEN, CLUSTER_SECRET_KEY, clusterFixture, pollUntil } from '../helpers/cluster.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { sharedPlaylineBin } from '../helpers/built-package.js';

// Redis DB 13 belongs to this file alone: it is flushed here (FLUSHDB: a FLUSHALL would also wipe
// the DB every other test shares; on the dedicated DB the two are the same).
const fx = await clusterFixture({ redisDb: 13 });
after(() => fx.cleanup());

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

describe('cluster mode: Redis statistics rebuilt from the PostgreSQL journal', { skip: fx.skip, timeout: 120_000 }, () => {
  test('after FLUSHDB, the rebuild (admin API, then CLI) gives the same statistics as before', async () => {
    const a = await fx.start();
    const b = await fx.start();
    const now = Date.now();
    const assets = Array.from({ length: 12 }, (_, i) => `asset-${i}`);
    for (let batch = 0; batch < 24; batch++) {
      const events: Partial<PlaybackEventInput>[] = [];
      for (let i = 0; i < 20; i++) {
        const n = batch * 20 + i;
        const asset = assets[(n * 7) % assets.length] as string;
        const session = `s-${n % 37}`;
        const ts = now - ((n * 7919) % 240_000);
        const kind = n % 6;
        if (kind === 0) events.push({ type: 'manifest', asset_id: asset, session_id: session, ts, latency_ms: (n % 97) / 3 });
        else if (kind === 1) events.push({ type: 'ad', asset_id: asset, session_id: session, ts, latency_ms: n % 13 });
        else if (kind === 2) events.push({ type: 'error', asset_id: asset, session_id: session, ts, error_code: [103, 104, 110][n % 3] as number });
        else if (kind === 3) events.push({ type: 'request', asset_id: asset, session_id: session, ts });
        else events.push({ type: 'start', asset_id: asset, session_id: session, ts });
      }
      const server = batch % 2 === 0 ? a : b;
      await fx.client(server).vodStats.ingest(events.map((e) => ({ ...e, owner: fx.owner })));
    }
    const read = async (server: ServerProcess) => ({
      top: (await fx.client(server).vodStats.all({ top: 100 })).items,
      search: (await fx.client(server).vodStats.search(assets)).items,
    });
    const before = await read(b);
    assert.equal(before.search.length, assets.length);

    const redis = new Redis(fx.redisUrl);
    try {
      await redis.flushdb();
    } finally {
      redis.disconnect();
    }
    // Every instance also notices the empty Redis on its next heartbeat and may start first (409).
    const rebuilt = await fx.admin(a, 'POST', '/api/v4/admin/cluster/rebuild-stats');
    assert.ok(rebuilt.status === 200 || rebuilt.status === 409, `rebuild answered ${rebuilt.status}`);
    await pollUntil(() => fx.admin(a, 'GET', '/api/v4/admin/cluster'), (s) => {
      const stats = (s.body as { stats: { rebuilding: boolean; built_at: number | null } }).stats;
      return !stats.rebuilding && stats.built_at !== null;
    }, 'rebuild finished');
    assert.deepEqual(await read(b), before);

    // The same through the CLI (a thin adapter over the same service).
    const env = { ...process.env, PLAYLINE_DATABASE_URL: fx.databaseUrl, PLAYLINE_REDIS_URL: fx.redisUrl, PLAYLINE_REDIS_PREFIX: fx.redisPrefix, PLAYLINE_ADMIN_TOKEN: CLUSTER_ADMIN_TOKEN, PLAYLINE_SECRET_KEY: CLUSTER_SECRET_KEY, PLAYLINE_LOG_LEVEL: 'warn' };
    const { stdout } = await run(process.execPath, [await sharedPlaylineBin(), 'cluster', 'rebuild-stats', '--json'], { cwd: root, env });
    assert.equal((JSON.parse(stdout) as { batches: number }).batches, 24);
    assert.deepEqual(await read(a), before);
  });
});
