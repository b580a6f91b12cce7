import type { WorkspaceView } from '../modules/workspaces/workspaces.schema.js';
import type { ClientCore } from './client.js';

export class WorkspaceApi {
  constructor(private readonly core: ClientCore) {}

  /** The workspace that the client's key belongs to. */
  get(): Promise<WorkspaceView> {
    return this.core.request<WorkspaceView>('GET', '/api/v4/workspace');
  }
}
