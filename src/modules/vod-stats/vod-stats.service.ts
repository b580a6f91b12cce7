import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { RETENTION_MS } from './stats-window.js';
import type { AssetStats, HistoryPoint, OwnerSummary, StatsStore } from './store/stats-store.js';
import { DEFAULT_HISTORY_RANGE, HISTORY_RANGES, MAX_SEARCH_IDS, MAX_TOP } from './vod-stats.schema.js';
import type { HistoryQuery } from './vod-stats.schema.js';

/** A history as answered: the range after clamping (Unix seconds) and its per-minute points. */
export interface StatsHistory {
  owner: string;
  assetId: string | null;
  from: number;
  to: number;
  points: HistoryPoint[];
}

const utc = (unixS: number): string => new Date(unixS * 1000).toISOString().replace('.000Z', 'Z');
const rangeRule = (path: string, message: string) => new AppError('validation_failed', message, { errors: [{ path: `/querystring/${path}`, message }] });

const searchRule = `asset_ids must be a non-empty list of at most ${MAX_SEARCH_IDS} asset ids`;

/** The four read-only statistics queries, over whichever store holds the statistics. */
export class VodStatsService {
  constructor(
    private readonly store: StatsStore,
    private readonly clock: Clock,
  ) {}

  /**
   * Per-minute history of the workspace (or one asset) over a named range ending now, or over
   * [from, to] (Unix seconds) clamped to the 24-hour serving window. A range wholly outside the
   * window is 400; an asset without statistics is 404 stats_not_found.
   */
  async history(owner: string, query: HistoryQuery): Promise<StatsHistory> {
    const nowS = Math.floor(this.clock.now() / 1000);
    const earliestS = nowS - RETENTION_MS / 1000;
    let from: number;
    let to: number;
    if (query.range !== undefined) {
      if (query.from !== undefined || query.to !== undefined) throw rangeRule('range', 'Give either range or from/to, not both');
      from = nowS - HISTORY_RANGES[query.range] * 60;
      to = nowS;
    } else {
      to = query.to ?? nowS;
      from = query.from ?? to - HISTORY_RANGES[DEFAULT_HISTORY_RANGE] * 60;
      if (from > nowS) throw rangeRule('from', `from (${utc(from)}) is in the future; the serving window ends now, ${utc(nowS)} (${nowS})`);
      if (to < earliestS) throw rangeRule('to', `to (${utc(to)}) is before the 24-hour serving window, which starts at ${utc(earliestS)} (${earliestS})`);
      if (from > to) throw rangeRule('from', `from (${utc(from)}) is after to (${utc(to)})`);
      from = Math.max(from, earliestS);
      to = Math.min(to, nowS);
    }
    const points = await this.store.history(owner, query.asset_id, from * 1000, to * 1000 + 999);
    if (points === undefined) {
      throw new AppError('stats_not_found', `No statistics for asset ${String(query.asset_id)}: unknown, or not played in the last 24 hours`);
    }
    return { owner, assetId: query.asset_id ?? null, from, to, points };
  }

  /** One asset; 404 stats_not_found when it is unknown or has no viewership in the serving window. */
  async asset(owner: string, assetId: string): Promise<AssetStats> {
    const stats = await this.store.get(owner, assetId);
    if (stats === undefined) {
      throw new AppError('stats_not_found', `No statistics for asset ${assetId}: unknown, or not played in the last 24 hours`);
    }
    return stats;
  }

  /** The known assets among `assetIds` (each once, in the order asked); unknown ids are left out. */
  search(owner: string, assetIds: readonly string[]): Promise<AssetStats[]> {
    if (assetIds.length === 0 || assetIds.length > MAX_SEARCH_IDS) {
      throw new AppError('validation_failed', searchRule, { errors: [{ path: '/asset_ids', message: searchRule }] });
    }
    const empty = assetIds.findIndex((id) => id.length === 0);
    if (empty !== -1) {
      throw new AppError('validation_failed', 'asset ids must not be empty', {
        errors: [{ path: `/asset_ids/${empty}`, message: 'must not be empty' }],
      });
    }
    return this.store.search(owner, [...new Set(assetIds)]);
  }

  /** The `top` (1-100) assets with the most new sessions in their window, ties by most recent ts. */
  top(owner: string, top: number = MAX_TOP): Promise<AssetStats[]> {
    if (!Number.isInteger(top) || top < 1 || top > MAX_TOP) {
      throw new AppError('validation_failed', `top must be an integer from 1 to ${MAX_TOP}`, {
        errors: [{ path: '/querystring/top', message: `must be an integer from 1 to ${MAX_TOP}` }],
      });
    }
    return this.store.top(owner, top);
  }

  summary(owner: string): Promise<OwnerSummary> {
    return this.store.summary(owner);
  }
}

/** `a,b, c` -> ['a', 'b', 'c'] (GET /monitoring/vod-stats/search?asset_ids=...). */
export const assetIdList = (value: string): string[] =>
  value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id.length > 0);
