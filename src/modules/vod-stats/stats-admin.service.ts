import { AppError } from '../../platform/errors.js';
import type { StatsRebuild } from './ingest/stats-rebuild.js';
import type { RebuildResultView } from './vod-stats.schema.js';

/** What an operator asks of the statistics (admin API and CLI). */
export class StatsAdminService {
  /** `rebuild`: cluster mode's rebuild from the journal; undefined in the embedded mode. */
  constructor(private readonly rebuild: Pick<StatsRebuild, 'rebuild'> | undefined) {}

  /** Rebuilds the Redis statistics from the PostgreSQL journal; 409 while another rebuild runs. */
  async rebuildStats(): Promise<RebuildResultView> {
    if (this.rebuild === undefined) {
      throw new AppError('conflict', 'The embedded mode keeps statistics in memory and restores them from its journal on start; there is nothing to rebuild');
    }
    const result = await this.rebuild.rebuild();
    if (result === 'busy') throw new AppError('conflict', 'A rebuild of the statistics is already running; see GET /api/v4/admin/cluster');
    return { '@type': 'StatsRebuild', batches: result.batches, events: result.events, last_seq: result.lastSeq };
  }
}
