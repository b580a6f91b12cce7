import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { CallbackDispatcher } from './callback-dispatcher.js';
import * as repo from './error-reporting.repository.js';
import type { CallbackRouteUpdater, CallbackSettings } from './error-reporting.service.js';
import { settingsFromRow, signerFor } from './error-reporting.service.js';

export interface CallbackRouteSyncDeps {
  db: Db;
  box: SecretBox;
  clock: Clock;
  dispatcher: CallbackDispatcher;
  /** How often the settings table is checked for changes made by other instances. Default 500 ms. */
  pollMs?: number;
  /** Told when checks start failing (once per run of failures); the next check is tried as usual. */
  onError?: (error: unknown) => void;
}

interface Known {
  revision: number;
  /** When the previous secret stops signing, so the route is rebuilt without it. */
  graceEndsAt: number | null;
}

/**
 * Keeps the dispatcher's routes equal to the stored settings. Changes made through this instance
 * apply at once (`apply`); changes made by another process on the same database are found by
 * comparing each workspace's revision every `pollMs`, so they apply within a second.
 */
export class CallbackRouteSync implements CallbackRouteUpdater {
  private readonly pollMs: number;
  private readonly known = new Map<string, Known>();
  private cancelTimer: (() => void) | undefined;
  private running = false;
  private failing = false;

  constructor(private readonly deps: CallbackRouteSyncDeps) {
    this.pollMs = deps.pollMs ?? 500;
  }

  async start(): Promise<void> {
    this.running = true;
    await this.refresh();
    this.scheduleNext();
  }

  stop(): void {
    this.running = false;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  apply(settings: CallbackSettings): void {
    const { dispatcher } = this.deps;
    // A check that read the row just before a local change must not undo that change.
    const known = this.known.get(settings.owner);
    if (known && known.revision > settings.revision) return;
    this.known.set(settings.owner, { revision: settings.revision, graceEndsAt: settings.previousSecretExpiresAt });
    const active = settings.enabled && settings.callbackUrl !== null;
    dispatcher.setRoute(
      settings.owner,
      active && settings.callbackUrl ? { owner: settings.owner, url: settings.callbackUrl, signer: signerFor(settings) } : undefined,
    );
  }

  /** One comparison with the stored settings; applies whatever changed. Never throws. */
  async refresh(): Promise<void> {
    const { db, box, clock, dispatcher } = this.deps;
    try {
      const now = clock.now();
      const revisions = await repo.listRevisions(db);
      const stale: string[] = [];
      const present = new Set<string>();
      for (const { workspace_id: owner, revision } of revisions) {
        present.add(owner);
        const known = this.known.get(owner);
        const graceEnded = known?.graceEndsAt !== null && known?.graceEndsAt !== undefined && known.graceEndsAt <= now;
        if (!known || known.revision !== Number(revision) || graceEnded) stale.push(owner);
      }
      for (const owner of [...this.known.keys()]) {
        if (present.has(owner)) continue;
        this.known.delete(owner);
        dispatcher.setRoute(owner, undefined);
      }
      for (let i = 0; i < stale.length; i += 500) {
        for (const row of await repo.findSettingsOf(db, stale.slice(i, i + 500))) this.apply(settingsFromRow(row, box, now));
      }
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.deps.onError?.(error);
      this.failing = true;
    }
  }

  private scheduleNext(): void {
    if (!this.running) return;
    this.cancelTimer = this.deps.clock.setTimer(() => {
      void this.refresh().then(() => this.scheduleNext());
    }, this.pollMs);
  }
}
