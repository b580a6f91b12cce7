import type { ApiKeyInfo, CreatedApiKey, Workspace } from './workspaces.service.js';
import type { ApiKeyView, WorkspaceView } from './workspaces.schema.js';

export const workspaceView = (w: Workspace, self = false): WorkspaceView => ({
  '@id': self ? '/api/v4/workspace' : `/api/v4/admin/workspaces/${w.id}`,
  '@type': 'Workspace',
  id: w.id,
  name: w.name,
  created_at: w.createdAt,
});

export const apiKeyView = (k: ApiKeyInfo | CreatedApiKey): ApiKeyView => ({
  '@id': `/api/v4/admin/workspaces/${k.workspaceId}/keys/${k.id}`,
  '@type': 'ApiKey',
  id: k.id,
  owner: k.workspaceId,
  kind: k.kind,
  label: k.label,
  prefix: k.prefix,
  created_at: k.createdAt,
  revoked_at: k.revokedAt,
  ...('secret' in k ? { secret: k.secret } : {}),
});
