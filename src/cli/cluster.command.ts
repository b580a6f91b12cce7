import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError } from '../platform/config.js';
import type { Runtime } from '../runtime.js';
import { printObject, printRows } from './output.js';
import { addSettingOptions, configFrom, storageKeys, withRuntime } from './storage-options.js';

const DEFAULT_TIMEOUT_S = 5;

const seconds = (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 600) throw new InvalidArgumentError('a number of seconds from 0 to 600');
  return n;
};

/**
 * Runs `fn` with the runtime's Redis connections open (the data commands start no background
 * work); gives up with a clear message when Redis does not answer within `timeout` seconds.
 */
const SECRET_KEY_HINT =
  "set PLAYLINE_SECRET_KEY (or --secret-key) to the instances' shared key: the cluster's database is bound to it " +
  '(npm run cluster keeps it in data/cluster/secret.key: PLAYLINE_SECRET_KEY=$(cat data/cluster/secret.key))';

/**
 * The cluster's database is bound to the instances' secret key (secret-key-check.ts). Without
 * PLAYLINE_SECRET_KEY the runtime would make a new key file in the data directory and either fail
 * with a mismatch or, on a fresh database, bind the deployment to that stray key: refused first.
 */
const requireSecretKey = (config: ReturnType<typeof configFrom>): void => {
  if (config.databaseUrl === undefined || config.secretKey !== undefined) return;
  if (existsSync(join(config.dataDir, 'secret.key'))) return;
  throw new ConfigError(`playline cluster reads the deployment's database: ${SECRET_KEY_HINT}`);
};

const withCluster = async <T>(opts: Record<string, unknown>, fn: (runtime: Runtime) => Promise<T>): Promise<T> => {
  requireSecretKey(configFrom(opts));
  try {
    return await withClusterRuntime(opts, fn);
  } catch (err) {
    if (err instanceof ConfigError && err.message.startsWith('PLAYLINE_SECRET_KEY')) throw new ConfigError(`${err.message} For playline cluster: ${SECRET_KEY_HINT}`);
    throw err;
  }
};

const withClusterRuntime = <T>(opts: Record<string, unknown>, fn: (runtime: Runtime) => Promise<T>): Promise<T> =>
  withRuntime(
    opts,
    async (runtime) => {
      await runtime.cluster?.connection.start();
      try {
        return await fn(runtime);
      } finally {
        await runtime.cluster?.connection.stop();
      }
    },
    { overrides: { clusterConnectTimeoutMs: Math.round(Number(opts.timeout ?? DEFAULT_TIMEOUT_S) * 1000) } },
  );

const clusterCommandOf = (name: string, description: string) =>
  addSettingOptions(
    new Command(name)
      .description(description)
      .option('--json', 'print JSON for scripts')
      .option('--timeout <seconds>', 'give up when Redis does not answer within this long', seconds, DEFAULT_TIMEOUT_S),
    [...storageKeys, 'redisUrl', 'redisPrefix'],
  ).addHelpText('after', `
Needs the deployment's PLAYLINE_DATABASE_URL, PLAYLINE_REDIS_URL and PLAYLINE_SECRET_KEY (the key
every instance shares; npm run cluster keeps it in data/cluster/secret.key).`);

/** `playline cluster status|rebuild-stats`: the admin API's cluster calls, without a server. */
export function clusterCommand(): Command {
  const command = new Command('cluster').description('Cluster mode (PLAYLINE_DATABASE_URL and PLAYLINE_REDIS_URL): members and the statistics rebuild');
  command.addCommand(
    clusterCommandOf('status', 'The instances of the cluster and the state of the Redis statistics').action(async (opts: Record<string, unknown>) => {
      const status = await withCluster(opts, (rt) => rt.clusterStatus.status());
      if (opts.json === true) {
        printObject(status, true);
        return;
      }
      printObject({ mode: status.mode, rebuilding: status.stats.rebuilding, built_at: status.stats.built_at === null ? null : new Date(status.stats.built_at).toISOString() }, false);
      const rows = status.instances.map((m) => ({ id: m.id, alive: m.alive, last_heartbeat: new Date(m.beat_at).toISOString() }));
      if (status.mode === 'cluster') printRows(rows, false, ['id', 'alive', 'last_heartbeat']);
    }),
  );
  command.addCommand(
    clusterCommandOf('rebuild-stats', 'Rebuild the Redis statistics from the PostgreSQL ingest journal (the last 24 hours); safe while instances run')
      .action(async (opts: Record<string, unknown>) => {
        const result = await withCluster(opts, (rt) => rt.vodStats.admin.rebuildStats());
        printObject({ batches: result.batches, events: result.events, last_seq: result.last_seq }, opts.json === true);
      }),
  );
  return command;
}
