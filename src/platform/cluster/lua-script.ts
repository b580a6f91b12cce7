import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export type LuaArg = string | number | Buffer;

/** A Lua script run by its SHA1 (EVALSHA), loaded on first use or after a Redis restart (NOSCRIPT). */
export class LuaScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, args: readonly LuaArg[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, 0, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, 0, ...args);
    }
  }
}
