import { randomBytes } from 'node:crypto';
import type {
  AdConfigView, AppKeyView, DeletedView, DrmPolicyView, PrivateAssetView, PutAdConfigInput, PutDrmPolicyInput,
} from '../modules/playback-edge/playback-edge.schema.js';
import { signPlaybackUrl, type ContentKind } from '../modules/playback-edge/playback-token.js';
import type { ClientCore } from './client.js';

export { parsePlaybackQuery, playbackPath, playbackSignature, signPlaybackUrl, type ContentKind, type PlaybackUrlInput } from '../modules/playback-edge/playback-token.js';

interface Collection<T> {
  '@id': string;
  '@type': 'Collection';
  items: T[];
  total_items: number;
}

export interface PlaybackUrlOptions {
  kind?: ContentKind;
  /** Seconds from now until the URL expires. Default 3600. */
  ttlS?: number;
  /** Sign with this key instead of the client's API key (an application key's secret, with `kid`/`kv` in params). */
  key?: string;
  /** Further parameters, in order (ad, pbs, hlsver, kid, kv, ...). */
  params?: ReadonlyArray<readonly [string, string]>;
  /** Where the edge is (default: the client's base URL, else a path-only URL). */
  baseUrl?: string;
}

const seg = encodeURIComponent;
const BASE = '/api/v4/playback';

/** The playback edge: signed playback URLs and the catalogue they refer to. */
export class PlaybackApi {
  constructor(private readonly core: ClientCore) {}

  /** A signed `/play/<id>.m3u8` URL for the client's workspace (tc, exp, rn, ct, cid, oid, params, then sig). */
  url(contentId: string, options: PlaybackUrlOptions = {}): string {
    const nowS = Math.floor((this.core.options.now ?? Date.now)() / 1000);
    return signPlaybackUrl(
      {
        baseUrl: options.baseUrl ?? this.core.options.baseUrl ?? '',
        kind: options.kind ?? 'asset',
        contentId,
        owner: this.core.options.owner,
        key: options.key ?? this.core.options.apiKey,
        expiresAt: nowS + (options.ttlS ?? 3600),
        ...(options.params ? { params: options.params } : {}),
      },
      () => randomBytes(8).toString('hex'),
    );
  }

  listAppKeys(): Promise<Collection<AppKeyView>> {
    return this.core.request('GET', `${BASE}/app-keys`);
  }

  /** Creates version 1; the answer's `secret` is shown only now. */
  createAppKey(name: string): Promise<AppKeyView> {
    return this.core.request('POST', `${BASE}/app-keys`, { body: { name } });
  }

  getAppKey(name: string): Promise<AppKeyView> {
    return this.core.request('GET', `${BASE}/app-keys/${seg(name)}`);
  }

  /** Adds the next version (its `secret` is shown only now); earlier versions sign until revoked. */
  addAppKeyVersion(name: string): Promise<AppKeyView> {
    return this.core.request('POST', `${BASE}/app-keys/${seg(name)}/versions`);
  }

  revokeAppKeyVersion(name: string, version: number): Promise<AppKeyView> {
    return this.core.request('DELETE', `${BASE}/app-keys/${seg(name)}/versions/${version}`);
  }

  deleteAppKey(name: string): Promise<DeletedView> {
    return this.core.request('DELETE', `${BASE}/app-keys/${seg(name)}`);
  }

  listAdConfigs(): Promise<Collection<AdConfigView>> {
    return this.core.request('GET', `${BASE}/ad-configs`);
  }

  getAdConfig(name: string): Promise<AdConfigView> {
    return this.core.request('GET', `${BASE}/ad-configs/${seg(name)}`);
  }

  putAdConfig(name: string, config: PutAdConfigInput): Promise<AdConfigView> {
    return this.core.request('PUT', `${BASE}/ad-configs/${seg(name)}`, { body: config });
  }

  deleteAdConfig(name: string): Promise<DeletedView> {
    return this.core.request('DELETE', `${BASE}/ad-configs/${seg(name)}`);
  }

  listDrmPolicies(): Promise<Collection<DrmPolicyView>> {
    return this.core.request('GET', `${BASE}/drm-policies`);
  }

  getDrmPolicy(name: string): Promise<DrmPolicyView> {
    return this.core.request('GET', `${BASE}/drm-policies/${seg(name)}`);
  }

  putDrmPolicy(name: string, policy: PutDrmPolicyInput): Promise<DrmPolicyView> {
    return this.core.request('PUT', `${BASE}/drm-policies/${seg(name)}`, { body: policy });
  }

  deleteDrmPolicy(name: string): Promise<DeletedView> {
    return this.core.request('DELETE', `${BASE}/drm-policies/${seg(name)}`);
  }

  listPrivateAssets(): Promise<Collection<PrivateAssetView>> {
    return this.core.request('GET', `${BASE}/private-assets`);
  }

  getPrivateAsset(assetId: string): Promise<PrivateAssetView> {
    return this.core.request('GET', `${BASE}/private-assets/${seg(assetId)}`);
  }

  /** Makes the asset private; only the workspaces listed may play it (with `coid`). */
  putPrivateAsset(assetId: string, sharedWith: string[] = []): Promise<PrivateAssetView> {
    return this.core.request('PUT', `${BASE}/private-assets/${seg(assetId)}`, { body: { shared_with: sharedWith } });
  }

  deletePrivateAsset(assetId: string): Promise<DeletedView> {
    return this.core.request('DELETE', `${BASE}/private-assets/${seg(assetId)}`);
  }
}
