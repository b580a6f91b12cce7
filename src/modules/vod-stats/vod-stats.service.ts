import { AppError } from '../../platform/errors.js';
import type { AssetStats, OwnerSummary, StatsStore } from './store/stats-store.js';
import { MAX_SEARCH_IDS, MAX_TOP } from './vod-stats.schema.js';

const searchRule = `asset_ids must be a non-empty list of at most ${MAX_SEARCH_IDS} asset ids`;

/** The four read-only statistics queries, over whichever store holds the statistics. */
export class VodStatsService {
  constructor(private readonly store: StatsStore) {}

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
