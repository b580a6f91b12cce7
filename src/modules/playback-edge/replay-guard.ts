import type { Clock } from '../../platform/clock.js';

export interface ReplayGuardOptions {
  clock: Clock;
  /** Most entries held; the oldest is forgotten first when full. */
  capacity: number;
  /** Longest an entry is remembered, whatever expiry it asks for (ms). */
  maxTtlMs: number;
}

/**
 * Single-use values (playback sessions, DRM signatures) remembered until they expire, in
 * bounded memory. When full, the oldest entry is forgotten (counted in `evicted`): reuse of a
 * value that old goes undetected, which the capacity setting trades against memory.
 */
export class ReplayGuard {
  private readonly entries = new Map<string, number>();
  private evictedCount = 0;

  constructor(private readonly options: ReplayGuardOptions) {}

  /**
   * Claims `key` until `expiresAt` (Unix ms). False when it is already claimed and not expired.
   * Synchronous, so two concurrent requests can never both claim one value.
   */
  claim(key: string, expiresAt: number): boolean {
    const now = this.options.clock.now();
    const held = this.entries.get(key);
    if (held !== undefined && held > now) return false;
    if (held !== undefined) this.entries.delete(key);
    this.sweep(now);
    if (this.entries.size >= this.options.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) {
        this.entries.delete(oldest.value);
        this.evictedCount += 1;
      }
    }
    this.entries.set(key, Math.min(expiresAt, now + this.options.maxTtlMs));
    return true;
  }

  /** Gives a claim back (the playback it was for failed later on). */
  release(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Unexpired entries forgotten because the guard was full. */
  get evicted(): number {
    return this.evictedCount;
  }

  /** Drops a few expired entries from the old end, so steady traffic keeps the map small. */
  private sweep(now: number): void {
    let looked = 0;
    for (const [key, expiresAt] of this.entries) {
      if (++looked > 8) break;
      if (expiresAt <= now) this.entries.delete(key);
    }
  }
}
