import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { assertOwnWorkspace, authOf } from '../../platform/http/auth-hook.js';
import { problemResponses } from '../../platform/http/problem.js';
import { AppError } from '../../platform/errors.js';
import type { KeyRing } from '../../platform/auth/key-ring.js';
import type { Authenticator } from '../../platform/auth/authenticator.js';
import type { WorkspaceService } from './workspaces.service.js';
import type { IngestGrantService } from './ingest-grants.service.js';
import { ingestGrantRoutes } from './ingest-grants.routes.js';
import type { WorkspaceDeletion } from './workspace-deletion.js';
import {
  ApiKeySchema, CreateKeyBody, CreateWorkspaceBody, DeletedWorkspaceSchema, KeyParams, WorkspaceParams, WorkspaceSchema, collectionOf,
} from './workspaces.schema.js';
import { apiKeyView, workspaceView } from './workspaces.view.js';

export interface WorkspaceRouteDeps {
  workspaces: WorkspaceService;
  workspaceDeletion: WorkspaceDeletion;
  keyRing: KeyRing;
  authenticator: Authenticator;
  ingestGrants: IngestGrantService;
}

const admin = { auth: 'admin' as const };
const OwnKeyParams = Type.Object({ key_id: Type.String({ minLength: 1, maxLength: 64 }) });
const adminSecurity = [{ adminToken: [] }];

/** `GET /workspace` for any signed caller; the admin API for workspaces, keys and ingest grants. */
export async function workspaceRoutes(app: App, deps: WorkspaceRouteDeps): Promise<void> {
  const { workspaces } = deps;
  await ingestGrantRoutes(app, deps.ingestGrants);

  app.get('/workspace', {
    config: { auth: 'api' },
    schema: { tags: ['workspaces'], summary: 'The workspace that signed the request', response: { 200: WorkspaceSchema, ...problemResponses(401) } },
  }, async (request) => workspaceView(await workspaces.getWorkspace(authOf(request).owner), true));

  app.get('/workspaces/:workspace_id', {
    config: { auth: 'api' },
    schema: { tags: ['workspaces'], summary: 'A workspace by id (only your own: another is 403)', params: WorkspaceParams, response: { 200: WorkspaceSchema, ...problemResponses(401, 403) } },
  }, async (request) => {
    assertOwnWorkspace(request, request.params.workspace_id);
    return workspaceView(await workspaces.getWorkspace(request.params.workspace_id), true);
  });

  app.get('/workspace/keys', {
    config: { auth: 'api' },
    schema: { tags: ['workspaces'], summary: 'The keys of your workspace (never their secrets)', response: { 200: collectionOf(ApiKeySchema), ...problemResponses(401) } },
  }, async (request) => {
    const items = (await workspaces.listKeys(authOf(request).owner)).map(apiKeyView);
    return { '@id': '/api/v4/workspace/keys', '@type': 'Collection' as const, items, total_items: items.length };
  });

  app.get('/workspace/keys/:key_id', {
    config: { auth: 'api' },
    schema: { tags: ['workspaces'], summary: 'One key of your workspace (another workspace\'s key is 404)', params: Type.Object({ key_id: Type.String({ minLength: 1, maxLength: 64 }) }), response: { 200: ApiKeySchema, ...problemResponses(401, 404) } },
  }, async (request) => apiKeyView(await workspaces.getKey(authOf(request).owner, request.params.key_id)));

  app.post('/workspace/keys', {
    config: { auth: 'api' },
    schema: {
      tags: ['workspaces'],
      summary: 'Create an API or ingest key in your workspace (the secret is in this answer only, never again)',
      body: CreateKeyBody,
      response: { 201: ApiKeySchema, ...problemResponses(400, 401) },
    },
  }, async (request, reply) => {
    const { owner } = authOf(request);
    const key = await workspaces.createKey(owner, request.body);
    deps.keyRing.invalidate(owner);
    reply.code(201);
    return apiKeyView(key);
  });

  app.delete('/workspace/keys/:key_id', {
    config: { auth: 'api' },
    schema: {
      tags: ['workspaces'],
      summary: 'Revoke a key of your workspace (not the key signing this request: 409; another workspace\'s key is 404)',
      params: OwnKeyParams,
      response: { 200: ApiKeySchema, ...problemResponses(401, 404, 409) },
    },
  }, async (request) => {
    const { owner, keyId } = authOf(request);
    await workspaces.getKey(owner, request.params.key_id);
    if (request.params.key_id === keyId) {
      throw new AppError('conflict', 'This request is signed with the key it would revoke: sign with another API key of the workspace to revoke this one');
    }
    const key = await workspaces.revokeKey(owner, request.params.key_id);
    deps.keyRing.invalidate(owner);
    deps.authenticator.forget();
    return apiKeyView(key);
  });

  app.post('/admin/workspaces', {
    config: admin,
    schema: { tags: ['admin'], summary: 'Create a workspace', security: adminSecurity, body: CreateWorkspaceBody, response: { 201: WorkspaceSchema, ...problemResponses(400, 401) } },
  }, async (request, reply) => {
    reply.code(201);
    return workspaceView(await workspaces.createWorkspace(request.body.name));
  });

  app.get('/admin/workspaces', {
    config: admin,
    schema: { tags: ['admin'], summary: 'List workspaces', security: adminSecurity, response: { 200: collectionOf(WorkspaceSchema), ...problemResponses(401) } },
  }, async () => {
    const items = (await workspaces.listWorkspaces()).map((w) => workspaceView(w));
    return { '@id': '/api/v4/admin/workspaces', '@type': 'Collection' as const, items, total_items: items.length };
  });

  app.delete('/admin/workspaces/:workspace_id', {
    config: admin,
    schema: {
      tags: ['admin'],
      summary: 'Delete a workspace with all its data: keys, publishing targets and schedules, slicers and tasks, playback catalogue, callback settings and deliveries, statistics',
      security: adminSecurity,
      params: WorkspaceParams,
      response: { 200: DeletedWorkspaceSchema, ...problemResponses(401, 404) },
    },
  }, async (request) => {
    const deleted = await deps.workspaceDeletion.delete(request.params.workspace_id);
    return { '@id': `/api/v4/admin/workspaces/${deleted.id}`, '@type': 'Workspace' as const, id: deleted.id, name: deleted.name, message: 'Deleted' as const, deleted: deleted.deleted };
  });

  app.post('/admin/workspaces/:workspace_id/keys', {
    config: admin,
    schema: { tags: ['admin'], summary: 'Create an API or ingest key (the secret is shown once)', security: adminSecurity, params: WorkspaceParams, body: CreateKeyBody, response: { 201: ApiKeySchema, ...problemResponses(400, 401, 404) } },
  }, async (request, reply) => {
    const key = await workspaces.createKey(request.params.workspace_id, request.body);
    deps.keyRing.invalidate(request.params.workspace_id);
    reply.code(201);
    return apiKeyView(key);
  });

  app.get('/admin/workspaces/:workspace_id/keys', {
    config: admin,
    schema: { tags: ['admin'], summary: 'List the keys of a workspace (without secrets)', security: adminSecurity, params: WorkspaceParams, response: { 200: collectionOf(ApiKeySchema), ...problemResponses(401, 404) } },
  }, async (request) => {
    const items = (await workspaces.listKeys(request.params.workspace_id)).map(apiKeyView);
    return { '@id': `/api/v4/admin/workspaces/${request.params.workspace_id}/keys`, '@type': 'Collection' as const, items, total_items: items.length };
  });

  app.delete('/admin/workspaces/:workspace_id/keys/:key_id', {
    config: admin,
    schema: { tags: ['admin'], summary: 'Revoke a key', security: adminSecurity, params: KeyParams, response: { 200: ApiKeySchema, ...problemResponses(401, 404) } },
  }, async (request) => {
    const key = await workspaces.revokeKey(request.params.workspace_id, request.params.key_id);
    deps.keyRing.invalidate(request.params.workspace_id);
    deps.authenticator.forget();
    return apiKeyView(key);
  });
}
