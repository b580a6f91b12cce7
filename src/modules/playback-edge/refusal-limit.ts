import type { FastifyRequest } from 'fastify';
import { fastifyRateLimit, type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { Clock } from '../../platform/clock.js';
import type { App } from '../../platform/http/types.js';
import { ADMITTED, type RefusalGate } from './playback-refusals.js';

export interface RefusalLimitSettings {
  /** Refusals admitted per client address and window; 0 turns the limit off. */
  max: number;
  windowMs: number;
  clock: Clock;
  /** Cluster mode: counts live in the deployment's Redis under `prefix`, shared by every instance. */
  cluster?: { redis: Redis; prefix: string } | undefined;
  onError: (message: string, error: unknown) => void;
}

/** Client addresses whose window the embedded mode keeps; the least recently refused is dropped first. */
const ADDRESSES_KEPT = 10_000;

/**
 * The rate limit of refused playbacks per client address (`@fastify/rate-limit`, its key per
 * address with IPv6 grouped by /64). Only refusals count: a playback is checked first and the
 * limit is asked only once it is refused, so a valid playback is never counted and never
 * throttled, even from an address over the limit; the refusals past the limit are answered 429
 * and emit nothing, which is what stops a flood from filling a workspace's statistics and its
 * callback. Registers the plugin on `app` (give it an encapsulated context of its own); it adds
 * no hook to any route (`global: false`), the gate asks it explicitly.
 */
export async function refusalLimiter(app: App, settings: RefusalLimitSettings): Promise<(request: FastifyRequest) => RefusalGate> {
  if (settings.max === 0) return () => () => Promise.resolve(ADMITTED);
  const { cluster } = settings;
  await app.register(fastifyRateLimit, {
    global: false,
    max: settings.max,
    timeWindow: settings.windowMs,
    ...(cluster ? { redis: cluster.redis, nameSpace: `${cluster.prefix}edge:refusals:` } : { store: clockedWindowStore(settings.clock, ADDRESSES_KEPT) }),
  });
  const countRefusal = app.createRateLimit();
  return (request) => async () => {
    try {
      const verdict = await countRefusal(request);
      return verdict.isAllowed || !verdict.isExceeded ? ADMITTED : { admitted: false, retryAfterS: Math.max(1, verdict.ttlInSeconds) };
    } catch (error) {
      // Fail open: without the counter (Redis unreachable) a refusal is answered and counted as before.
      settings.onError('the refused-playback limit could not be checked; refusal admitted', error);
      return ADMITTED;
    }
  };
}

interface Window {
  current: number;
  startedAt: number;
}

/**
 * The library's in-memory fixed window (its LocalStore: the window starts at the first count and
 * resets once it has passed) read from the runtime's clock instead of `Date.now`, so tests move
 * windows with the fake clock. Bounded: the least recently counted address is dropped first.
 */
export function clockedWindowStore(clock: Clock, capacity: number): FastifyRateLimitStoreCtor {
  return class ClockedWindowStore implements FastifyRateLimitStore {
    private readonly windows = new Map<string, Window>();

    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
      const now = clock.now();
      const held = this.windows.get(key);
      const window = held && held.startedAt + timeWindow > now ? held : { current: 0, startedAt: now };
      window.current += 1;
      this.windows.delete(key);
      this.windows.set(key, window);
      if (this.windows.size > capacity) {
        const oldest = this.windows.keys().next();
        if (!oldest.done) this.windows.delete(oldest.value);
      }
      callback(null, { current: window.current, ttl: window.startedAt + timeWindow - now });
    }

    child(): FastifyRateLimitStore {
      return new ClockedWindowStore();
    }
  };
}
