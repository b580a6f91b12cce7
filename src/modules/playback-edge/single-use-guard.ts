import type { Clock } from '../../platform/clock.js';

/**
 * Single-use values of one kind (playback sessions `pbs`, DRM URL signatures), claimed per
 * workspace until the URL that carries them expires. In memory for one process
 * (`MemorySingleUseGuard`), in Redis for a cluster (`RedisSingleUseGuard`).
 */
export interface SingleUseGuard {
  /**
   * Claims `key` of workspace `owner` until `expiresAt` (Unix ms; never longer than the guard's
   * longest hold). False when it is already claimed and not expired. Of two concurrent claims of
   * one value, exactly one wins.
   */
  claim(owner: string, key: string, expiresAt: number): Promise<boolean>;
  /** Gives a claim back (the playback it was for failed later on). */
  release(owner: string, key: string): Promise<void>;
}

/** A claim taken, to give back if the playback fails later. */
export interface SingleUseClaim {
  guard: SingleUseGuard;
  owner: string;
  key: string;
}

/**
 * Gives claims back. A failed release (Redis unreachable) only leaves the value used until the
 * URL expires, so it is reported and never thrown.
 */
export async function releaseClaims(claims: readonly SingleUseClaim[], onError: (error: unknown) => void = () => undefined): Promise<void> {
  const results = await Promise.allSettled(claims.map((c) => c.guard.release(c.owner, c.key)));
  for (const r of results) if (r.status === 'rejected') onError(r.reason);
}

export interface MemorySingleUseGuardOptions {
  clock: Clock;
  /** Entries held per workspace at most; a full workspace forgets its own oldest first. */
  capacityPerOwner: number;
  /** Longest an entry is remembered, whatever expiry it asks for (ms). */
  maxTtlMs: number;
}

/** Entries looked at per sweep: enough to keep steady traffic's maps small, cheap per claim. */
const SWEEP_LOOK = 8;

/**
 * Claims in bounded memory, bounded per workspace: one workspace filling its share (which only
 * its own signed URLs can do) evicts its own oldest entries, never another's. An evicted entry is
 * counted in `evicted`: reuse of a value that old goes undetected, which the capacity trades
 * against memory. Check and set happen in one synchronous step, so concurrent claims cannot
 * both win.
 */
export class MemorySingleUseGuard implements SingleUseGuard {
  /** Owner -> key -> expiry (Unix ms), each map in claim order. Owners in least recently swept order. */
  private readonly owners = new Map<string, Map<string, number>>();
  private held = 0;
  private evictedCount = 0;

  constructor(private readonly options: MemorySingleUseGuardOptions) {}

  claim(owner: string, key: string, expiresAt: number): Promise<boolean> {
    return Promise.resolve(this.claimNow(owner, key, expiresAt));
  }

  release(owner: string, key: string): Promise<void> {
    const entries = this.owners.get(owner);
    if (entries?.delete(key)) this.held -= 1;
    if (entries?.size === 0) this.owners.delete(owner);
    return Promise.resolve();
  }

  /** Entries held, all workspaces together. */
  get size(): number {
    return this.held;
  }

  /** Unexpired entries forgotten because their workspace's share was full. */
  get evicted(): number {
    return this.evictedCount;
  }

  private claimNow(owner: string, key: string, expiresAt: number): boolean {
    const now = this.options.clock.now();
    const entries = this.owners.get(owner) ?? new Map<string, number>();
    const held = entries.get(key);
    if (held !== undefined && held > now) return false;
    if (held !== undefined) {
      entries.delete(key);
      this.held -= 1;
    }
    // Swept now: to the back of the sweep order, then sweep the workspace at the front.
    this.sweep(entries, now);
    this.owners.delete(owner);
    this.sweepLeastRecent(now);
    if (entries.size >= this.options.capacityPerOwner) {
      const oldest = entries.keys().next();
      if (!oldest.done) {
        entries.delete(oldest.value);
        this.held -= 1;
        this.evictedCount += 1;
      }
    }
    entries.set(key, Math.min(expiresAt, now + this.options.maxTtlMs));
    this.held += 1;
    this.owners.set(owner, entries);
    return true;
  }

  /** Drops a few expired entries from the old end, so steady traffic keeps the map small. */
  private sweep(entries: Map<string, number>, now: number): void {
    let looked = 0;
    for (const [key, expiresAt] of entries) {
      if (++looked > SWEEP_LOOK) break;
      if (expiresAt <= now) {
        entries.delete(key);
        this.held -= 1;
      }
    }
  }

  /**
   * Sweeps the workspace swept longest ago too, so the entries of a workspace that stopped
   * playing expire away without it claiming again; an emptied workspace is dropped.
   */
  private sweepLeastRecent(now: number): void {
    const first = this.owners.entries().next();
    if (first.done) return;
    const [owner, entries] = first.value;
    this.sweep(entries, now);
    this.owners.delete(owner);
    if (entries.size > 0) this.owners.set(owner, entries);
  }
}
