import { ClientCore, type ClientOptions } from './client.js';
import { WorkspaceApi } from './workspaces.js';
import { ErrorReportingApi } from './error-reporting.js';
import { ManagedSlicerApi } from './managed-slicers.js';
import { SyndicationApi } from './syndication.js';
import { VodStatsApi } from './vod-stats.js';
import { PlaybackApi } from './playback-edge.js';
import { AssetApi } from './assets.js';
import { WebhooksApi } from './webhooks.js';
import type { ServerSettingsView } from '../modules/server-info/server-info.schema.js';

export type { ServerSettingsView };

export { ClientCore, PlaylineApiError, type ClientOptions, type RequestOptions } from './client.js';
export { fetchTransport, injectTransport, TransportError, type Transport } from './transport.js';
export { signV4, encodeMsg, signatureOf } from '../platform/auth/v4-signature.js';
export { playbackPath, playbackSignature, type ContentKind } from './playback-edge.js';

/** The typed Playline SDK: one property per API area. */
export class PlaylineClient {
  readonly core: ClientCore;
  readonly workspace: WorkspaceApi;
  readonly errorReporting: ErrorReportingApi;
  readonly managedSlicers: ManagedSlicerApi;
  readonly syndication: SyndicationApi;
  readonly vodStats: VodStatsApi;
  readonly playback: PlaybackApi;
  readonly assets: AssetApi;
  readonly webhooks: WebhooksApi;

  constructor(options: ClientOptions) {
    this.core = new ClientCore(options);
    this.workspace = new WorkspaceApi(this.core);
    this.errorReporting = new ErrorReportingApi(this.core);
    this.managedSlicers = new ManagedSlicerApi(this.core);
    this.syndication = new SyndicationApi(this.core);
    this.vodStats = new VodStatsApi(this.core);
    this.playback = new PlaybackApi(this.core);
    this.assets = new AssetApi(this.core);
    this.webhooks = new WebhooksApi(this.core);
  }

  /** How the server is set up (`GET /api/v4/server`): ingest host and ports, the outbound allow-list, media tools. */
  serverSettings(): Promise<ServerSettingsView> {
    return this.core.request<ServerSettingsView>('GET', '/api/v4/server');
  }
}
