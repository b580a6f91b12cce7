import type { ApiKeyView, WorkspaceView } from '../modules/workspaces/workspaces.schema.js';
import type { ContentShareView, DeletedView } from '../modules/playback-edge/playback-edge.schema.js';
import type { ClientCore } from './client.js';
import type { WorkspaceUsageView } from '../modules/workspaces/workspace-usage.schema.js';

const KEYS = '/api/v4/workspace/keys';
const SHARES = '/api/v4/workspace/shares';

export class WorkspaceApi {
  constructor(private readonly core: ClientCore) {}

  /** The workspace that the client's key belongs to. */
  get(): Promise<WorkspaceView> {
    return this.core.request<WorkspaceView>('GET', '/api/v4/workspace');
  }

  /**
   * The workspace's quotas, each with what it uses and its limit (storage bytes, assets, slicers,
   * targets, schedules, started schedules); creating beyond one answers 409 quota_exceeded,
   * storing beyond the storage quota 507 storage_quota_exceeded.
   */
  usage(): Promise<WorkspaceUsageView> {
    return this.core.request<WorkspaceUsageView>('GET', '/api/v4/workspace/usage');
  }

  /** The keys of the workspace, revoked ones included (never their secrets). */
  async keys(): Promise<ApiKeyView[]> {
    return (await this.core.request<{ items: ApiKeyView[] }>('GET', KEYS)).items;
  }

  /** Creates an API key (default) or ingest key; the answer's `secret` is the only time it is shown. */
  createKey(options: { kind?: 'api' | 'ingest'; label?: string } = {}): Promise<ApiKeyView> {
    return this.core.request<ApiKeyView>('POST', KEYS, { body: options });
  }

  /** Revokes a key of the workspace (not the one this client signs with: 409). */
  revokeKey(keyId: string): Promise<ApiKeyView> {
    return this.core.request<ApiKeyView>('DELETE', `${KEYS}/${encodeURIComponent(keyId)}`);
  }

  /** The workspaces this one shares its content (assets and live events) with: they may play it with `coid=<this workspace>`. */
  async shares(): Promise<ContentShareView[]> {
    return (await this.core.request<{ items: ContentShareView[] }>('GET', SHARES)).items;
  }

  /** The share with one workspace (404 when there is none). */
  getShare(granteeId: string): Promise<ContentShareView> {
    return this.core.request<ContentShareView>('GET', `${SHARES}/${encodeURIComponent(granteeId)}`);
  }

  /**
   * Shares this workspace's content with another: its own signed URLs with `coid=<this workspace>`
   * play this workspace's assets and live events (private-asset entries still decide for their assets).
   */
  share(granteeId: string): Promise<ContentShareView> {
    return this.core.request<ContentShareView>('PUT', `${SHARES}/${encodeURIComponent(granteeId)}`);
  }

  /** Stops sharing with a workspace: its URLs naming this workspace in `coid` answer 102 again. */
  unshare(granteeId: string): Promise<DeletedView> {
    return this.core.request<DeletedView>('DELETE', `${SHARES}/${encodeURIComponent(granteeId)}`);
  }
}
