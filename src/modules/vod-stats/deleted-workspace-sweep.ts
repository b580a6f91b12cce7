import type { BackgroundWork } from '../../platform/background-work.js';
import type { Clock } from '../../platform/clock.js';
import type { StatsStore } from './store/stats-store.js';

export interface DeletedWorkspaceSweepDeps {
  store: StatsStore;
  /** The ids among those given that are workspaces. */
  existing(ids: readonly string[]): Promise<Set<string>>;
  clock: Clock;
  everyMs?: number;
  onError?: (error: unknown) => void;
}

/**
 * Statistics are kept only for workspaces that exist. Deleting a workspace erases its
 * statistics at once; this sweep erases them again wherever they come back from: the journal
 * replayed on start (embedded) or into a rebuilt Redis (cluster), a workspace deleted by a CLI
 * process while the server ran. It runs once the statistics are restored (before the server
 * listens) and then every `everyMs`. Nobody can read an unknown workspace's statistics, so
 * erasing them changes no answer.
 */
export class DeletedWorkspaceSweep implements BackgroundWork {
  readonly name = 'vod-stats deleted-workspace sweep';
  private cancel: (() => void) | undefined;
  private running = false;

  constructor(private readonly deps: DeletedWorkspaceSweepDeps) {}

  /** Erases the statistics of every owner that is no workspace; how many were erased. */
  async sweep(): Promise<number> {
    const owners = await this.deps.store.ownerIds();
    if (owners.length === 0) return 0;
    const existing = await this.deps.existing(owners);
    let erased = 0;
    for (const owner of owners) {
      if (existing.has(owner)) continue;
      await this.deps.store.eraseOwner(owner);
      erased++;
    }
    return erased;
  }

  async start(): Promise<void> {
    this.running = true;
    await this.sweep();
    this.schedule();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.cancel?.();
    this.cancel = undefined;
  }

  private schedule(): void {
    if (!this.running) return;
    this.cancel = this.deps.clock.setTimer(() => {
      void this.sweep()
        .catch((error: unknown) => this.deps.onError?.(error))
        .finally(() => this.schedule());
    }, this.deps.everyMs ?? 60_000);
  }
}
