import type { DashboardApi } from '../api/client.js';
import type { LiveStats } from '../live-stats.js';

/** One screen of the dashboard, mounted once and shown or hidden by the router. */
export interface View {
  readonly element: HTMLElement;
  /** Becomes visible; `param` is the route's argument (an asset id). */
  show(param: string | undefined): void;
  hide(): void;
}

export interface ViewContext {
  api: DashboardApi;
  live: LiveStats;
  /** Refresh interval of live data, in ms. */
  intervalMs: number;
}
