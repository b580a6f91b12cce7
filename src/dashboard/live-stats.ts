import type { DashboardApi } from './api/client.js';
import type { VodStatsCollection, VodStatsSummary } from './api/types.js';
import { Poller } from './poller.js';

/** What the overview shows: the latest summary and top assets, or why they are missing. */
export interface LiveSnapshot {
  summary: VodStatsSummary | null;
  top: VodStatsCollection | null;
  summaryError: unknown;
  topError: unknown;
  /** Unix ms of the last completed refresh. */
  at: number;
}

type Listener = (snapshot: LiveSnapshot) => void;

/**
 * Polls the workspace summary and the top 100 assets while signed in (it also notices a revoked
 * key on any view) and tells the views that listen. History comes from the server's history API.
 */
export class LiveStats {
  private readonly listeners = new Set<Listener>();
  private readonly poller: Poller;
  snapshot: LiveSnapshot | null = null;

  constructor(
    private readonly api: DashboardApi,
    intervalMs: number,
  ) {
    this.poller = new Poller(() => this.refresh(), intervalMs);
  }

  start(): void {
    this.poller.start();
  }

  stop(): void {
    this.poller.stop();
    this.listeners.clear();
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    if (this.snapshot) listener(this.snapshot);
    return () => this.listeners.delete(listener);
  }

  private async refresh(): Promise<void> {
    const [summary, top] = await Promise.allSettled([this.api.ownerSummary(), this.api.topAssets(100)]);
    const at = Date.now();
    this.snapshot = {
      summary: summary.status === 'fulfilled' ? summary.value : null,
      top: top.status === 'fulfilled' ? top.value : null,
      summaryError: summary.status === 'rejected' ? summary.reason : null,
      topError: top.status === 'rejected' ? top.reason : null,
      at,
    };
    for (const listener of this.listeners) listener(this.snapshot);
  }
}
