import type { Clock } from '../clock.js';
import { describeStorageFull, isStorageFull } from './storage-full.js';

/** A write that needs fresh space; it throws while storage is full. */
export type WriteProbe = () => Promise<void>;

/**
 * Whether writes can be made. A write that failed for lack of space marks storage full, and
 * readiness stays false until a write succeeds again. Readiness checks that with a probe write
 * itself: an instance taken out of rotation gets no traffic that could clear it otherwise.
 */
export class StorageHealth {
  private full: { since: number; reason: string } | undefined;

  constructor(
    private readonly probe: WriteProbe,
    private readonly clock: Clock,
  ) {}

  /** Records a failed write; true when it failed for lack of space. */
  noteFailure(err: unknown): boolean {
    if (!isStorageFull(err)) return false;
    this.full = { since: this.full?.since ?? this.clock.now(), reason: describeStorageFull(err) };
    return true;
  }

  /** Undefined when writes work; otherwise why not. While marked full, tries one probe write. */
  async problem(): Promise<string | undefined> {
    const full = this.full;
    if (full === undefined) return undefined;
    try {
      await this.probe();
      this.full = undefined;
      return undefined;
    } catch (err) {
      const reason = isStorageFull(err) ? describeStorageFull(err) : `a probe write failed: ${String(err)}`;
      this.full = { since: full.since, reason };
      return `storage full since ${new Date(full.since).toISOString()} (${reason})`;
    }
  }
}
