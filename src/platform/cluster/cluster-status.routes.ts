import type { App } from '../http/types.js';
import { problemResponses } from '../http/problem.js';
import type { ClusterAdminService } from './cluster-status.service.js';
import { ClusterStatusSchema, RebuildResultSchema } from './cluster-status.schema.js';

export interface ClusterRouteDeps {
  clusterAdmin: ClusterAdminService;
}

const admin = { auth: 'admin' as const };
const adminSecurity = [{ adminToken: [] }];

/** The cluster's admin API: membership and the statistics rebuild. */
export async function clusterRoutes(api: App, deps: ClusterRouteDeps): Promise<void> {
  api.get('/admin/cluster', {
    config: admin,
    schema: {
      tags: ['admin'],
      summary: 'Deployment mode, the instances of the cluster and the state of the Redis statistics',
      security: adminSecurity,
      response: { 200: ClusterStatusSchema, ...problemResponses(401) },
    },
  }, () => deps.clusterAdmin.status());

  api.post('/admin/cluster/rebuild-stats', {
    config: admin,
    schema: {
      tags: ['admin'],
      summary: 'Rebuild the Redis statistics from the PostgreSQL ingest journal (the last 24 hours); answers when done',
      security: adminSecurity,
      response: { 200: RebuildResultSchema, ...problemResponses(401, 409) },
    },
  }, () => deps.clusterAdmin.rebuildStats());
}
