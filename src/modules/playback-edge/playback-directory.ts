import { LRUCache } from 'lru-cache';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { SigningKeyLoader } from '../../platform/auth/key-ring.js';
import type { AdConfig, AppKeySecret, DrmPolicy, PlaybackDirectory, PrivateAsset } from './playback-catalog.js';
import * as repo from './playback-edge.repository.js';
import { toAdConfig, toDrmPolicy, toPrivateAsset } from './playback-catalog.service.js';

interface Entry {
  value: Promise<unknown>;
  loadedAt: number;
}

export interface StoredDirectoryDeps {
  db: Db;
  box: SecretBox;
  clock: Clock;
  /** The owner's keys (the runtime's KeyRing, which caches them itself). */
  signingKeys: SigningKeyLoader;
  /** How long a looked-up entry is reused. Default 1000 ms. */
  ttlMs?: number;
  /** Entries kept at most; past it the least recently used is forgotten. Default 100,000. */
  maxEntries?: number;
}

/**
 * The edge's view of the playback catalogue, read from storage and kept for a second, so a
 * popular URL costs no query per playback while changes made elsewhere show within the TTL.
 */
export class StoredPlaybackDirectory implements PlaybackDirectory {
  private readonly entries: LRUCache<string, Entry>;
  private readonly ttlMs: number;

  constructor(private readonly deps: StoredDirectoryDeps) {
    this.ttlMs = deps.ttlMs ?? 1000;
    // On the injected clock (ttlResolution 0: no real-time debounce of its reading).
    this.entries = new LRUCache<string, Entry>({ max: deps.maxEntries ?? 100_000, ttl: this.ttlMs, ttlResolution: 0, perf: { now: () => deps.clock.now() } });
  }

  async signingKeys(owner: string): Promise<Buffer[] | null> {
    const keys = await this.deps.signingKeys(owner);
    return keys === null ? null : keys.filter((k) => !k.revoked && k.kind === 'api').map((k) => k.secret);
  }

  appKey(owner: string, name: string): Promise<AppKeySecret[]> {
    return this.cached(`k\u0000${owner}\u0000${name}`, async () =>
      (await repo.listAppKeyVersions(this.deps.db, owner, name)).map((row) => ({
        version: row.version,
        secret: Buffer.from(this.deps.box.open(row.secret_sealed), 'utf8'),
        revoked: row.revoked_at !== null,
      })),
    );
  }

  adConfig(owner: string, name: string): Promise<AdConfig | undefined> {
    return this.cached(`a\u0000${owner}\u0000${name}`, async () => {
      const row = await repo.findAdConfig(this.deps.db, owner, name);
      return row ? toAdConfig(row) : undefined;
    });
  }

  drmPolicy(owner: string, name: string): Promise<DrmPolicy | undefined> {
    return this.cached(`d\u0000${owner}\u0000${name}`, async () => {
      const row = await repo.findDrmPolicy(this.deps.db, owner, name);
      return row ? toDrmPolicy(row) : undefined;
    });
  }

  privateAsset(owner: string, assetId: string): Promise<PrivateAsset | undefined> {
    return this.cached(`p\u0000${owner}\u0000${assetId}`, async () => {
      const row = await repo.findPrivateAsset(this.deps.db, owner, assetId);
      return row ? toPrivateAsset(row) : undefined;
    });
  }

  sharesWith(owner: string, granteeId: string): Promise<boolean> {
    // Ends in \u0000 too: forgetting either workspace (a share given or received) drops it.
    return this.cached(`s\u0000${owner}\u0000${granteeId}\u0000`, async () => (await repo.findShare(this.deps.db, owner, granteeId)) !== undefined);
  }

  /** Forgets what is cached for an owner (after a change through this process). */
  invalidate(owner: string): void {
    const marker = `\u0000${owner}\u0000`;
    for (const key of [...this.entries.keys()]) if (key.includes(marker)) this.entries.delete(key);
  }

  private cached<T>(key: string, load: () => Promise<T>): Promise<T> {
    const now = this.deps.clock.now();
    const entry = this.entries.get(key);
    if (entry && now - entry.loadedAt < this.ttlMs) return entry.value as Promise<T>;
    const value = load();
    const loaded = { value, loadedAt: now };
    this.entries.set(key, loaded);
    value.catch(() => {
      if (this.entries.peek(key) === loaded) this.entries.delete(key);
    });
    return value;
  }
}
