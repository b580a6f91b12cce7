import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { Registry } from 'prom-client';
import type { BackgroundWork } from '../../platform/background-work.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Storage } from '../../platform/db/database.js';
import type { ErrorReportSink } from '../../platform/error-report-sink.js';
import { VodStatsService } from './vod-stats.service.js';
import { ChangeFeed } from '../../platform/cluster/change-feed.js';
import { ClusterIngestService } from './ingest/cluster-ingest.service.js';
import { ClusterNode, type NodeLog } from '../../platform/cluster/membership.js';
import { registerClusterMetrics } from './cluster.metrics.js';
import { PostgresEventJournal } from './journal/postgres-journal.js';
import { RedisStatsStore } from './store/redis-stats-store.js';
import { StatsRebuild } from './ingest/stats-rebuild.js';

export interface ClusterDeps {
  config: Pick<Config, 'redisUrl' | 'redisPrefix' | 'statsDelayMs' | 'logLevel'>;
  clock: Clock;
  storage: Storage;
  /** Names this process in the journal and the registry (default host:pid:random). */
  instanceId?: string;
}

/** What cluster mode adds to a runtime: shared Redis connections and the change feed. */
export interface Cluster {
  instanceId: string;
  redis: Redis;
  feed: ChangeFeed;
  deps: ClusterDeps;
  log: NodeLog;
  /** Connects to Redis first of all background work; disconnects last. */
  connection: BackgroundWork;
}

/** Cluster-mode statistics, shaped like the embedded ones (see vod-stats.module.ts). */
export interface ClusterStats {
  ingest: ClusterIngestService;
  service: VodStatsService;
  store: RedisStatsStore;
  journal: PostgresEventJournal;
  rebuild: StatsRebuild;
  node: ClusterNode;
  /** Joins the cluster (rebuilding the statistics first if Redis has none); leaves it on stop. */
  work: BackgroundWork;
}

const redisOptions = { lazyConnect: true, maxRetriesPerRequest: 2, connectTimeout: 5000 } as const;

/** Cluster mode's connections (PLAYLINE_DATABASE_URL and PLAYLINE_REDIS_URL set). */
export function createCluster(deps: ClusterDeps): Cluster {
  const { config, storage } = deps;
  if (config.redisUrl === undefined || storage.engine !== 'postgres') {
    throw new Error('cluster mode needs PostgreSQL storage and PLAYLINE_REDIS_URL');
  }
  const redisUrl = config.redisUrl;
  const log = pino({ name: 'cluster', level: config.logLevel });
  const instanceId = deps.instanceId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const redis = new Redis(redisUrl, redisOptions);
  const subscriber = new Redis(redisUrl, { ...redisOptions, maxRetriesPerRequest: null });
  for (const client of [redis, subscriber]) client.on('error', (err: Error) => log.warn({ err: err.message }, 'Redis connection problem'));
  const feed = new ChangeFeed({ publisher: redis, subscriber, prefix: `${config.redisPrefix}feed:`, instanceId });
  const connection: BackgroundWork = {
    name: 'cluster connection',
    async start() {
      try {
        await Promise.all([redis.connect(), subscriber.connect()]);
      } catch (err) {
        throw new Error(`Redis is not reachable at ${redactUrl(redisUrl)}: ${(err as Error).message}`, { cause: err });
      }
      log.info({ instanceId }, 'joined the cluster');
    },
    async stop() {
      await feed.close();
      await Promise.all([redis.quit().catch(() => redis.disconnect()), subscriber.quit().catch(() => subscriber.disconnect())]);
    },
  };
  return { instanceId, redis, feed, deps, log, connection };
}

export interface ClusterStatsDeps {
  metrics: { registry: Registry };
  /** Where accepted error events go; read at each submit, so it may be replaced later. */
  errorReports: () => ErrorReportSink;
  /** Told the number of live instances after every heartbeat. */
  onMembers?: (alive: number) => void;
}

/** Statistics in cluster mode: PostgreSQL journal, Redis store, the instance's part in the cluster. */
export function createClusterStats(cluster: Cluster, deps: ClusterStatsDeps): ClusterStats {
  const { redis, instanceId, log } = cluster;
  const { config, clock, storage } = cluster.deps;
  const store = new RedisStatsStore({ redis, clock, prefix: `${config.redisPrefix}stats:`, delayMs: config.statsDelayMs });
  const journal = new PostgresEventJournal({ db: storage.db, clock, instanceId });
  const ingest = new ClusterIngestService({
    store,
    journal,
    clock,
    errorReports: { submit: (report) => deps.errorReports().submit(report) },
    onError: (message, err) => log.error({ err }, message),
  });
  const rebuild = new StatsRebuild({ redis, store, journal, clock });
  const node = new ClusterNode({
    redis, prefix: `${config.redisPrefix}cluster:`, instanceId, clock, ingest, store, journal, rebuild, log,
    ...(deps.onMembers ? { onMembers: deps.onMembers } : {}),
  });
  registerClusterMetrics(deps.metrics.registry, ingest, store);
  return {
    ingest,
    service: new VodStatsService(store),
    store,
    journal,
    rebuild,
    node,
    work: { name: 'cluster statistics', start: () => node.start(), stop: () => node.stop() },
  };
}

/** A URL without its password, for messages. */
const redactUrl = (url: string): string => url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
