import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import type { BackgroundWork } from '../background-work.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Storage } from '../db/database.js';
import { ChangeFeed } from './change-feed.js';
import { Membership, type ClusterLog } from './membership.js';

export interface ClusterDeps {
  config: Pick<Config, 'redisUrl' | 'redisPrefix'>;
  clock: Clock;
  /** Checked only: cluster mode shares a PostgreSQL database. */
  storage: Pick<Storage, 'engine'>;
  /** Names this process in the journal and the registry (default `newInstanceId()`). */
  instanceId?: string;
  /** The runtime's logger for cluster plumbing (a child of the root). */
  log: ClusterLog;
  /**
   * Gives up connecting to Redis after this long (the CLI: a command must end with a clear
   * message, never hang). Default: none, the server keeps trying and says so in its log.
   */
  connectTimeoutMs?: number;
}

/** What cluster mode adds to a runtime: the shared Redis connections, the change feed and the membership. */
export interface Cluster {
  instanceId: string;
  redis: Redis;
  /** Every Redis key and channel of this deployment starts with it (PLAYLINE_REDIS_PREFIX). */
  prefix: string;
  feed: ChangeFeed;
  membership: Membership;
  log: ClusterLog;
  /** Connects to Redis first of all background work; disconnects last. */
  connection: BackgroundWork;
}

/** A name for this process, unique in the cluster and readable in the registry: host:pid:random. */
export const newInstanceId = (): string => `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;

const redisOptions = { lazyConnect: true, maxRetriesPerRequest: 2, connectTimeout: 5000 } as const;

/** Cluster mode's connections (PLAYLINE_DATABASE_URL and PLAYLINE_REDIS_URL set). */
export function createCluster(deps: ClusterDeps): Cluster {
  const { config, clock, storage } = deps;
  if (config.redisUrl === undefined || storage.engine !== 'postgres') {
    throw new Error('cluster mode needs PostgreSQL storage and PLAYLINE_REDIS_URL');
  }
  const redisUrl = config.redisUrl;
  const prefix = config.redisPrefix;
  const { log } = deps;
  const instanceId = deps.instanceId ?? newInstanceId();
  const options = { ...redisOptions, connectTimeout: Math.min(redisOptions.connectTimeout, deps.connectTimeoutMs ?? Infinity) };
  const redis = new Redis(redisUrl, options);
  const subscriber = new Redis(redisUrl, { ...options, maxRetriesPerRequest: null });
  let lastError = '';
  for (const client of [redis, subscriber]) {
    client.on('error', (err: Error) => {
      lastError = err.message;
      log.warn({ err: err.message }, 'Redis connection problem');
    });
  }
  const feed = new ChangeFeed({ publisher: redis, subscriber, prefix: `${prefix}feed:`, instanceId });
  const membership = new Membership({ redis, prefix: `${prefix}cluster:`, instanceId, clock, log });
  const connection: BackgroundWork = {
    name: 'cluster connection',
    async start() {
      const connected = Promise.all([redis.connect(), subscriber.connect()]);
      const why = () => (lastError === '' ? 'no answer' : lastError);
      let cancelTimer: (() => void) | undefined;
      const timeoutMs = deps.connectTimeoutMs;
      const timedOut =
        timeoutMs === undefined
          ? undefined
          : new Promise<never>((_resolve, reject) => {
              cancelTimer = clock.setTimer(() => reject(new Error(`Redis is not reachable at ${redactUrl(redisUrl)} within ${timeoutMs / 1000} s (${why()})`)), timeoutMs);
            });
      try {
        await (timedOut ? Promise.race([connected, timedOut.catch((err: unknown) => Promise.reject(err))]) : connected);
      } catch (err) {
        // No reconnecting in the background of a start that failed: the process can end.
        redis.disconnect();
        subscriber.disconnect();
        if ((err as Error).message.startsWith('Redis is not reachable')) throw err;
        throw new Error(`Redis is not reachable at ${redactUrl(redisUrl)}: ${why()}`, { cause: err });
      } finally {
        cancelTimer?.();
      }
      log.info({ instanceId }, 'joined the cluster');
    },
    async stop() {
      await feed.close();
      await Promise.all([redis.quit().catch(() => redis.disconnect()), subscriber.quit().catch(() => subscriber.disconnect())]);
    },
  };
  return { instanceId, redis, prefix, feed, membership, log, connection };
}

/** A URL without its password, for messages. */
const redactUrl = (url: string): string => url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
