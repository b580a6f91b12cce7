import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import type { StatsAdminService } from './stats-admin.service.js';
import { RebuildResultSchema } from './vod-stats.schema.js';

export interface StatsAdminRouteDeps {
  vodStats: { admin: StatsAdminService };
}

/** The admin API's statistics rebuild (cluster mode; the path is the cluster admin API's). */
export async function statsAdminRoutes(api: App, deps: StatsAdminRouteDeps): Promise<void> {
  api.post('/admin/cluster/rebuild-stats', {
    config: { auth: 'admin' },
    schema: {
      tags: ['admin'],
      summary: 'Rebuild the Redis statistics from the PostgreSQL ingest journal (the last 24 hours); answers when done',
      security: [{ adminToken: [] }],
      response: { 200: RebuildResultSchema, ...problemResponses(401, 409) },
    },
  }, () => deps.vodStats.admin.rebuildStats());
}
