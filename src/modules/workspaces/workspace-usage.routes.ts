import { authOf } from '../../platform/http/auth-hook.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import type { WorkspaceUsage } from '../../platform/quota/workspace-usage.js';
import { WorkspaceUsageSchema, type WorkspaceUsageView } from './workspace-usage.schema.js';

/** `GET /workspace/usage`: the signing workspace's use of each quota, with the limit. */
export async function workspaceUsageRoutes(app: App, usage: WorkspaceUsage): Promise<void> {
  app.get('/workspace/usage', {
    config: { auth: 'api' },
    schema: {
      tags: ['workspaces'],
      summary: 'Your workspace\'s quotas: for each, what it uses and its limit',
      description: 'Creating beyond a count quota answers 409 `quota_exceeded`, storing beyond the storage quota 507 `storage_quota_exceeded`; both name the quota, its limit and the usage.',
      response: { 200: WorkspaceUsageSchema, ...problemResponses(401) },
    },
  }, async (request): Promise<WorkspaceUsageView> => {
    const { owner } = authOf(request);
    const report = await usage.of(owner);
    return {
      '@id': '/api/v4/workspace/usage',
      '@type': 'WorkspaceUsage',
      workspace_id: owner,
      quotas: report.quotas,
      storage: { by_source: report.storage.bySource, reserved: report.storage.reserved },
    };
  });
}
