import type { App } from '../http/types.js';
import { problemResponses } from '../http/problem.js';
import type { ClusterStatusService } from './cluster-status.service.js';
import { ClusterStatusSchema } from './cluster-status.schema.js';

export interface ClusterStatusRouteDeps {
  clusterStatus: ClusterStatusService;
}

/** The admin API's view of the deployment: mode, the instances of the cluster, the shared statistics. */
export async function clusterStatusRoutes(api: App, deps: ClusterStatusRouteDeps): Promise<void> {
  api.get('/admin/cluster', {
    config: { auth: 'admin' },
    schema: {
      tags: ['admin'],
      summary: 'Deployment mode, the instances of the cluster and the state of the Redis statistics',
      security: [{ adminToken: [] }],
      response: { 200: ClusterStatusSchema, ...problemResponses(401) },
    },
  }, () => deps.clusterStatus.status());
}
