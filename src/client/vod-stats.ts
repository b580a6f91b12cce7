import type { IngestResult, PlaybackEvent } from '../modules/vod-stats/events.schema.js';
import type {
  HistoryQuery,
  VodStatsBody,
  VodStatsCollectionBody,
  VodStatsHistoryBody,
  VodStatsSummaryBody,
} from '../modules/vod-stats/vod-stats.schema.js';
import type { ClientCore } from './client.js';

const STATS = '/api/v4/monitoring/vod-stats';

/** An event to ingest: `ts` may be left out (receipt time). */
export type PlaybackEventInput = Omit<PlaybackEvent, 'ts'> & { ts?: number };

/** VOD playback statistics: event ingest and the four read-only statistics endpoints. */
export class VodStatsApi {
  constructor(private readonly core: ClientCore) {}

  /** Sends events as NDJSON (one per line); resolves once they are journaled durably. */
  ingest(events: readonly Partial<PlaybackEventInput>[]): Promise<IngestResult> {
    const body = events.map((e) => JSON.stringify(e)).join('\n');
    return this.core.request<IngestResult>('POST', '/api/v4/monitoring/events', { body, contentType: 'application/x-ndjson' });
  }

  /** Sends an NDJSON or JSON body as is (e.g. a file a playback server wrote). */
  ingestRaw(body: string | Buffer, contentType: 'application/x-ndjson' | 'application/json' = 'application/x-ndjson'): Promise<IngestResult> {
    return this.core.request<IngestResult>('POST', '/api/v4/monitoring/events', { body, contentType });
  }

  /** The assets with the most new sessions (top 1-100, default 100); owner defaults to yours. */
  all(query: { owner?: string; top?: number } = {}): Promise<VodStatsCollectionBody> {
    return this.core.request<VodStatsCollectionBody>('GET', STATS, { query });
  }

  /** Several assets at once (1-1000 ids); unknown ids are left out. */
  search(assetIds: readonly string[]): Promise<VodStatsCollectionBody> {
    return this.core.request<VodStatsCollectionBody>('POST', `${STATS}/search`, { body: { asset_ids: assetIds } });
  }

  /** One asset (404 stats_not_found when it has no statistics). */
  asset(assetId: string): Promise<VodStatsBody> {
    return this.core.request<VodStatsBody>('GET', `${STATS}/${encodeURIComponent(assetId)}`);
  }

  /** The workspace's last three minutes (default: the signing workspace). */
  summary(workspaceId?: string): Promise<VodStatsSummaryBody> {
    const path = workspaceId === undefined ? `${STATS}/owner-summary` : `${STATS}/owner-summary/${encodeURIComponent(workspaceId)}`;
    return this.core.request<VodStatsSummaryBody>('GET', path);
  }

  /**
   * Per-minute history of the workspace, or of one asset (`asset_id`), over a named `range`
   * (15m, 1h, 6h, 24h, ending now) or `from`/`to` in Unix seconds within the 24-hour serving window.
   */
  history(query: HistoryQuery = {}): Promise<VodStatsHistoryBody> {
    return this.core.request<VodStatsHistoryBody>('GET', `${STATS}/history`, { query });
  }
}
