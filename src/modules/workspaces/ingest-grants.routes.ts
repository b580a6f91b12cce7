import type { App } from '../../platform/http/types.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { IngestGrant, IngestGrantService } from './ingest-grants.service.js';
import { GrantParams, IngestGrantSchema, type IngestGrantView } from './ingest-grants.schema.js';
import { WorkspaceParams, collectionOf } from './workspaces.schema.js';

const admin = { auth: 'admin' as const };
const adminSecurity = [{ adminToken: [] }];
const tags = ['admin'];

export const ingestGrantView = (g: IngestGrant): IngestGrantView => ({
  '@id': `/api/v4/admin/workspaces/${g.workspaceId}/ingest-grants/${g.granteeId}`,
  '@type': 'IngestGrant',
  workspace_id: g.workspaceId,
  grantee_id: g.granteeId,
  created_at: g.createdAt,
});

/** The admin API of ingest grants: which workspaces' ingest keys may submit events for a workspace. */
export async function ingestGrantRoutes(app: App, grants: IngestGrantService): Promise<void> {
  app.get('/admin/workspaces/:workspace_id/ingest-grants', {
    config: admin,
    schema: {
      tags,
      summary: 'List the workspaces whose ingest keys may submit events for this workspace',
      security: adminSecurity,
      params: WorkspaceParams,
      response: { 200: collectionOf(IngestGrantSchema), ...problemResponses(401, 404) },
    },
  }, async (request) => {
    const items = (await grants.list(request.params.workspace_id)).map(ingestGrantView);
    return { '@id': `/api/v4/admin/workspaces/${request.params.workspace_id}/ingest-grants`, '@type': 'Collection' as const, items, total_items: items.length };
  });

  app.put('/admin/workspaces/:workspace_id/ingest-grants/:grantee_id', {
    config: admin,
    schema: {
      tags,
      summary: "Let the grantee workspace's ingest keys submit events for this workspace (201 created, 200 if it already could)",
      security: adminSecurity,
      params: GrantParams,
      response: { 200: IngestGrantSchema, 201: IngestGrantSchema, ...problemResponses(401, 404, 422) },
    },
  }, async (request, reply) => {
    const { grant, created } = await grants.grant(request.params.workspace_id, request.params.grantee_id);
    void reply.code(created ? 201 : 200);
    return ingestGrantView(grant);
  });

  app.delete('/admin/workspaces/:workspace_id/ingest-grants/:grantee_id', {
    config: admin,
    schema: {
      tags,
      summary: "Revoke a grant: the grantee's ingest keys may no longer submit events for this workspace (batches accepted before stay counted)",
      security: adminSecurity,
      params: GrantParams,
      response: { 200: IngestGrantSchema, ...problemResponses(401, 404) },
    },
  }, async (request) => ingestGrantView(await grants.revoke(request.params.workspace_id, request.params.grantee_id)));
}
