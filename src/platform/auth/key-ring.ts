import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';
import type { SigningKey } from './signing-key.js';

export type SigningKeyLoader = (owner: string) => Promise<SigningKey[] | null>;

interface Entry {
  keys: Promise<SigningKey[] | null>;
  loadedAt: number;
}

/** A loaded key set and when it was read, so a caller can ask for a newer one. */
export interface KeySet {
  keys: Promise<SigningKey[] | null>;
  loadedAt: number;
}

export interface KeyRingOptions {
  /** How long an owner's keys are reused; bounds how late a revocation by another process is seen. */
  ttlMs?: number;
  /** The least time between two reloads of one owner forced by a failed signature. */
  minReloadMs?: number;
  /** Owners kept at most; past it the least recently used owner is forgotten. Default 100,000. */
  maxOwners?: number;
}

/**
 * Signing keys per owner, read from storage and kept for `ttlMs`, so a key revoked by another
 * process (the CLI on the same database, another cluster instance) is refused within that time.
 * A key created by another process works at once: a signature that matches none of the cached
 * keys asks for a reload (`newer`), at most once per `minReloadMs` per owner, so a flood of
 * bad signatures cannot turn into a flood of database reads. Local changes invalidate at once.
 */
export class KeyRing {
  /** Least recently used owners go first when full (never every owner at once: no reload stampede). */
  private readonly entries: LRUCache<string, Entry>;
  private readonly ttlMs: number;
  private readonly minReloadMs: number;
  /** Reads from storage, for tests and metrics. */
  readonly counters = { loads: 0, forcedReloads: 0 };

  constructor(
    private readonly load: SigningKeyLoader,
    private readonly clock: Clock,
    options: KeyRingOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 1000;
    this.minReloadMs = options.minReloadMs ?? 200;
    // Entries older than the TTL are dropped by the cache too, on the same clock (ttlResolution 0:
    // no real-time debounce of the clock reading, which a fake clock would defeat).
    this.entries = new LRUCache<string, Entry>({ max: options.maxOwners ?? 100_000, ttl: this.ttlMs, ttlResolution: 0, perf: { now: () => clock.now() } });
  }

  get(owner: string): Promise<SigningKey[] | null> {
    return this.current(owner).keys;
  }

  /** The owner's keys with the time they were read (cached for `ttlMs`). */
  current(owner: string): KeySet {
    const now = this.clock.now();
    const entry = this.entries.get(owner);
    // Exactly `ttlMs`: the cache keeps an entry of age ttlMs, this check does not.
    if (entry && now - entry.loadedAt < this.ttlMs) return entry;
    return this.reload(owner, now);
  }

  /**
   * A key set newer than `used`, after a signature matched none of its keys: one read since, or
   * a fresh read unless this owner was read less than `minReloadMs` ago. Undefined when there is
   * nothing newer to try.
   */
  newer(owner: string, used: KeySet): KeySet | undefined {
    const now = this.clock.now();
    const entry = this.entries.get(owner);
    if (entry && entry !== used) return entry;
    if (entry && now - entry.loadedAt < this.minReloadMs) return undefined;
    this.counters.forcedReloads++;
    return this.reload(owner, now);
  }

  /** When the keys were last read for this owner (for caches layered on top). */
  loadedAt(owner: string): number | undefined {
    return this.entries.peek(owner)?.loadedAt;
  }

  invalidate(owner?: string): void {
    if (owner === undefined) this.entries.clear();
    else this.entries.delete(owner);
  }

  private reload(owner: string, now: number): Entry {
    this.counters.loads++;
    const keys = this.load(owner);
    const entry = { keys, loadedAt: now };
    this.entries.set(owner, entry);
    keys.catch(() => {
      if (this.entries.peek(owner) === entry) this.entries.delete(owner);
    });
    return entry;
  }
}
