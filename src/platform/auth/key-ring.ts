import type { Clock } from '../clock.js';
import type { SigningKey } from './signing-key.js';

export type SigningKeyLoader = (owner: string) => Promise<SigningKey[] | null>;

interface Entry {
  keys: Promise<SigningKey[] | null>;
  loadedAt: number;
}

/**
 * Signing keys per owner, read from storage and kept for `ttlMs` so that a key created or
 * revoked by another process (the CLI on the same database, another cluster instance) takes
 * effect within that time. Local changes invalidate at once.
 */
export class KeyRing {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly load: SigningKeyLoader,
    private readonly clock: Clock,
    private readonly ttlMs = 1000,
    private readonly maxOwners = 100_000,
  ) {}

  get(owner: string): Promise<SigningKey[] | null> {
    const now = this.clock.now();
    const entry = this.entries.get(owner);
    if (entry && now - entry.loadedAt < this.ttlMs) return entry.keys;
    const keys = this.load(owner);
    if (this.entries.size >= this.maxOwners) this.entries.clear();
    this.entries.set(owner, { keys, loadedAt: now });
    keys.catch(() => this.entries.delete(owner));
    return keys;
  }

  /** When the keys were last read for this owner (for caches layered on top). */
  loadedAt(owner: string): number | undefined {
    return this.entries.get(owner)?.loadedAt;
  }

  invalidate(owner?: string): void {
    if (owner === undefined) this.entries.clear();
    else this.entries.delete(owner);
  }
}
