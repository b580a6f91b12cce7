import type { Redis } from 'ioredis';
import type { Clock } from '../../platform/clock.js';
import type { SingleUseGuard } from './single-use-guard.js';

export interface RedisSingleUseGuardOptions {
  redis: Redis;
  /** Key prefix of this kind of value, under the deployment's prefix (e.g. `playline:edge:pbs:`). */
  prefix: string;
  clock: Clock;
  /** Longest an entry is remembered, whatever expiry it asks for (ms). */
  maxTtlMs: number;
}

/**
 * Claims shared by every instance of a cluster: one Redis key per claimed value, set only if
 * absent (`SET key 1 NX PX ttl`), so a value used on one instance is refused on all of them.
 * The time to live is relative (PX, not PXAT), so a clock difference between an instance and
 * Redis cannot make a claim expire early or late. Memory is bounded by the URLs' lifetimes (at
 * most `maxTtlMs`), not by a count: run Redis with `maxmemory-policy noeviction`.
 */
export class RedisSingleUseGuard implements SingleUseGuard {
  constructor(private readonly options: RedisSingleUseGuardOptions) {}

  async claim(owner: string, key: string, expiresAt: number): Promise<boolean> {
    const now = this.options.clock.now();
    const ttlMs = Math.max(1, Math.min(expiresAt, now + this.options.maxTtlMs) - now);
    return (await this.options.redis.set(this.keyOf(owner, key), '1', 'PX', ttlMs, 'NX')) === 'OK';
  }

  async release(owner: string, key: string): Promise<void> {
    await this.options.redis.del(this.keyOf(owner, key));
  }

  /** Owners are workspace ids (hex) and keys `pbs` values or signatures: neither holds a colon. */
  private keyOf(owner: string, key: string): string {
    return `${this.options.prefix}${owner}:${key}`;
  }
}
