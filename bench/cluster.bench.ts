/**
 * Cluster mode (PostgreSQL journal + Redis statistics): ingest throughput with one instance and
 * with two side by side (the two-instance figure against the one-instance baseline: the ratio
 * is the scaling), and statistics query latency from an instance that did not ingest. Runs on
 * the local PostgreSQL and Redis (PLAYLINE_TEST_DATABASE_URL / PLAYLINE_TEST_REDIS_URL) in a
 * database and key prefix of its own, removed afterwards.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { signV4 } from '../src/platform/auth/v4-signature.js';
import { postgresProblem, testDatabaseUrl } from '../test/helpers/engines.js';
import { deleteKeys, redisProblem, testRedisUrl } from '../test/helpers/redis.js';
import { withAdminClient } from '../test/helpers/cluster.js';
import { startServerProcess, type ServerProcess } from '../test/helpers/server-process.js';
import { ingestBodies } from './ingest.bench.js';
import { load, type LoadResult } from './lib/http-load.js';
import type { Benchmark, Comparison } from './lib/report.js';

const EVENTS_PER_BATCH = 1_000;
const ADMIN = 'bench-admin-token-0123456789';


export const clusterBenchmark: Benchmark = {
  name: 'cluster',
  description: `Cluster mode: NDJSON batches of ${EVENTS_PER_BATCH} events into 1 vs 2 instances (journal commit + Redis count), queries on the other instance`,
  async run() {
    const problem = (await postgresProblem()) ?? (await redisProblem());
    if (problem) {
      process.stdout.write(`  skipped: ${problem}\n`);
      return [];
    }
    const durationS = Number(process.env.BENCH_DURATION_S ?? 5);
    const database = `playline_bench_${randomBytes(4).toString('hex')}`;
    const prefix = `bench:${randomBytes(4).toString('hex')}:`;
    const dataDir = mkdtempSync(join(tmpdir(), 'playline-cluster-bench-'));
    const servers: ServerProcess[] = [];
    await withAdminClient((c) => c.query(`create database ${database}`));
    const start = async () => {
      const server = await startServerProcess({
        PLAYLINE_DATA_DIR: dataDir,
        // Cluster mode with ffmpeg installed needs one media directory shared by the instances.
        PLAYLINE_MEDIA_DIR: join(dataDir, 'media'),
        PLAYLINE_DATABASE_URL: Object.assign(new URL(testDatabaseUrl), { pathname: `/${database}` }).toString(),
        PLAYLINE_REDIS_URL: testRedisUrl,
        PLAYLINE_REDIS_PREFIX: prefix,
        PLAYLINE_SECRET_KEY: Buffer.alloc(32, 5).toString('base64'),
        PLAYLINE_ADMIN_TOKEN: ADMIN,
      });
      servers.push(server);
      return server;
    };
    try {
      const a = await start();
      const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
      const workspace = (await (await fetch(`${a.url}/api/v4/admin/workspaces`, { method: 'POST', headers, body: '{"name":"bench"}' })).json()) as { id: string };
      const key = (await (await fetch(`${a.url}/api/v4/admin/workspaces/${workspace.id}/keys`, { method: 'POST', headers, body: '{}' })).json()) as { secret: string };
      const owner = workspace.id;
      const signed = (path: string) => {
        const { msg, sig } = signV4(owner, key.secret, Math.floor(Date.now() / 1000));
        return `${path}${path.includes('?') ? '&' : '?'}msg=${encodeURIComponent(msg)}&sig=${sig}`;
      };
      const bodies = ingestBodies(owner, 8, EVENTS_PER_BATCH);
      const ingestInto = (server: ServerProcess): Promise<LoadResult> =>
        load({
          url: server.url,
          connections: 4,
          durationS,
          requests: bodies.map((body) => ({ method: 'POST', path: signed('/api/v4/monitoring/events'), body, headers: { 'content-type': 'application/x-ndjson' } })),
        });
      const eventsPerS = (results: LoadResult[]) => {
        for (const r of results) if (r.non2xx > 0 || r.errors > 0) throw new Error(`ingest answered non-2xx ${r.non2xx} times, ${r.errors} errors`);
        return results.reduce((n, r) => n + r.requestsPerSec * EVENTS_PER_BATCH, 0);
      };

      const one = eventsPerS([await ingestInto(a)]);
      const b = await start();
      const two = eventsPerS(await Promise.all([ingestInto(a), ingestInto(b)]));

      // Queries on B, about what both ingested (every asset lives in Redis, none in B's memory).
      const asset = '0'.padStart(32, '0');
      const single = await load({ url: b.url, connections: 10, durationS, requests: [{ path: signed(`/api/v4/monitoring/vod-stats/${asset}`) }] });
      const top = await load({ url: b.url, connections: 10, durationS, requests: [{ path: signed('/api/v4/monitoring/vod-stats?top=100') }] });
      for (const r of [single, top]) if (r.non2xx > 0 || r.errors > 0) throw new Error(`queries answered non-2xx ${r.non2xx} times, ${r.errors} errors`);
      const results: Comparison[] = [
        { name: `ingest, 1 instance (${cpus().length} cores shared with PostgreSQL, Redis and the load generator)`, unit: 'events/s', value: one },
        {
          name: 'ingest, 2 instances side by side (sum)',
          unit: 'events/s',
          value: two,
          baseline: { name: '1 instance, same run', value: one },
        },
        { name: 'single-asset stats GET on the other instance, p50', unit: 'ms', value: single.p50Ms },
        { name: `single-asset stats GET on the other instance, p99 (${Math.round(single.requestsPerSec)} req/s)`, unit: 'ms', value: single.p99Ms },
        { name: `all-assets top 100 on the other instance, p99 (${Math.round(top.requestsPerSec)} req/s, 10,000 assets)`, unit: 'ms', value: top.p99Ms },
      ];
      return results;
    } finally {
      for (const server of servers) await server.stop().catch(() => undefined);
      await withAdminClient((c) => c.query(`drop database if exists ${database} with (force)`)).catch(() => undefined);
      const redis = new Redis(testRedisUrl);
      await deleteKeys(redis, `${prefix}*`).catch(() => undefined);
      redis.disconnect();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
