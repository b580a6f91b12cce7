import type { Redis } from 'ioredis';
import { bindingToken, type ClusterJournal } from '../journal/cluster-journal.js';

/** How the Redis statistics relate to this deployment's journal. */
export type BindingVerdict =
  /** They were built from this journal, as of its current epoch: counting may go on. */
  | { kind: 'bound' }
  /** Redis holds no statistics (new, flushed, evicted): build them from the journal. */
  | { kind: 'empty' }
  /** Redis holds statistics of another deployment or epoch (or of a build that did not bind them). */
  | { kind: 'foreign'; redis: string | null; journal: string };

export interface StatsBindingOptions {
  redis: Pick<Redis, 'get' | 'exists'>;
  journal: Pick<ClusterJournal, 'binding'>;
  /** The statistics store's key prefix (`<PLAYLINE_REDIS_PREFIX>stats:`). */
  prefix: string;
}

/**
 * Binds the Redis statistics to the PostgreSQL journal they are counted from. The journal names
 * its deployment and an epoch that moves on at every rebuild; a rebuild writes both into Redis
 * (`<prefix>binding`). Checked at start-up and after every Redis reconnect: until the two
 * match, nothing is counted into Redis (ingest journals and holds its batches), because Redis
 * that remembers another deployment (a shared prefix, a new database, a restored one) would
 * answer with another deployment's statistics and skip batches under its "counted" marks.
 */
export class StatsBinding {
  readonly key: string;
  private readonly epochKey: string;
  private state: 'unchecked' | 'bound' | 'unbound' = 'unchecked';
  private lane: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: StatsBindingOptions) {
    this.key = `${o.prefix}binding`;
    this.epochKey = `${o.prefix}epoch`;
  }

  /** Whether batches may be counted into Redis now. */
  get bound(): boolean {
    return this.state === 'bound';
  }

  /** Redis went away: whatever answers next must be checked before anything is counted into it. */
  lost(): void {
    this.state = 'unchecked';
  }

  /** Compares Redis with the journal (one check at a time) and records the outcome. */
  check(): Promise<BindingVerdict> {
    const run = this.lane.then(async () => {
      const verdict = await this.compare();
      this.state = verdict.kind === 'bound' ? 'bound' : 'unbound';
      return verdict;
    });
    this.lane = run.catch(() => undefined);
    return run;
  }

  private async compare(): Promise<BindingVerdict> {
    const journal = bindingToken(await this.o.journal.binding());
    const [redis, built] = await Promise.all([this.o.redis.get(this.key), this.o.redis.exists(this.epochKey)]);
    if (redis === journal) return { kind: 'bound' };
    if (built === 0) return { kind: 'empty' };
    return { kind: 'foreign', redis, journal };
  }

  /** Why this instance will not count into Redis, for the refusal to start (rebuilds turned off). */
  static refusal(verdict: Extract<BindingVerdict, { kind: 'foreign' }>, prefix: string): string {
    const held = verdict.redis === null ? 'statistics that are bound to no journal (an earlier build, or another deployment)' : `the statistics of deployment:epoch ${verdict.redis}`;
    return (
      `Redis under prefix ${prefix} holds ${held}, but this database's journal is ${verdict.journal}: ` +
      'counting into it would mix deployments and could skip acknowledged batches. Give this deployment its own ' +
      'PLAYLINE_REDIS_PREFIX (or Redis), or set PLAYLINE_STATS_REBUILD_ON_MISMATCH=true to rebuild the statistics from this journal.'
    );
  }
}
