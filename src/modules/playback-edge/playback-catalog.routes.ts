import { authOf } from '../../platform/http/auth-hook.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import type { DrmProvider } from './drm-provider.js';
import type { PlaybackCatalogService } from './playback-catalog.service.js';
import {
  AdConfigCollection, AdConfigParams, AdConfigSchema, AppKeyCollection, AppKeyParams, AppKeySchema, AppKeyVersionParams,
  CreateAppKeyBody, DeletedSchema, DrmPolicyCollection, DrmPolicyParams, DrmPolicySchema, PrivateAssetCollection,
  PrivateAssetParams, PrivateAssetSchema, PutAdConfigBody, PutDrmPolicyBody, PutPrivateAssetBody,
} from './playback-edge.schema.js';
import { adConfigView, appKeyView, collection, deletedView, drmPolicyView, privateAssetView } from './playback-edge.view.js';

export interface PlaybackCatalogRouteDeps {
  catalog: PlaybackCatalogService;
  drm: DrmProvider;
}

const tags = ['playback'];
export const DEFAULT_AD_TIMEOUT_MS = 2000;

/** `/api/v4/playback/...`: what playback URLs refer to (application keys, ad configurations, DRM policies, private assets). */
export async function playbackCatalogRoutes(app: App, deps: PlaybackCatalogRouteDeps): Promise<void> {
  const owner = (request: Parameters<typeof authOf>[0]) => authOf(request).owner;

  app.get('/playback/app-keys', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Your application keys and their versions (never their secrets)', response: { 200: AppKeyCollection, ...problemResponses(401) } },
  }, async (request) => collection('app-keys', (await deps.catalog.listAppKeys(owner(request))).map(appKeyView)));

  app.post('/playback/app-keys', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Create an application key (version 1); its secret is shown once', body: CreateAppKeyBody, response: { 201: AppKeySchema, ...problemResponses(400, 401, 409) } },
  }, async (request, reply) => {
    reply.code(201);
    return appKeyView(await deps.catalog.createAppKey(owner(request), request.body.name));
  });

  app.get('/playback/app-keys/:name', {
    config: { auth: 'api' },
    schema: { tags, summary: 'One application key', params: AppKeyParams, response: { 200: AppKeySchema, ...problemResponses(400, 401, 404) } },
  }, async (request) => appKeyView(await deps.catalog.getAppKey(owner(request), request.params.name)));

  app.post('/playback/app-keys/:name/versions', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Add the next version (earlier ones sign until revoked); its secret is shown once', params: AppKeyParams, response: { 201: AppKeySchema, ...problemResponses(400, 401, 404, 409) } },
  }, async (request, reply) => {
    reply.code(201);
    return appKeyView(await deps.catalog.addAppKeyVersion(owner(request), request.params.name));
  });

  app.delete('/playback/app-keys/:name/versions/:version', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Revoke one version (URLs naming it answer 120)', params: AppKeyVersionParams, response: { 200: AppKeySchema, ...problemResponses(400, 401, 404) } },
  }, async (request) => appKeyView(await deps.catalog.revokeAppKeyVersion(owner(request), request.params.name, request.params.version)));

  app.delete('/playback/app-keys/:name', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Delete an application key and every version (URLs naming it answer 119)', params: AppKeyParams, response: { 200: DeletedSchema, ...problemResponses(400, 401, 404) } },
  }, async (request) => {
    await deps.catalog.deleteAppKey(owner(request), request.params.name);
    return deletedView(`/api/v4/playback/app-keys/${encodeURIComponent(request.params.name)}`, 'PlaybackAppKey');
  });

  app.get('/playback/ad-configs', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Your ad configurations', response: { 200: AdConfigCollection, ...problemResponses(401) } },
  }, async (request) => collection('ad-configs', (await deps.catalog.listAdConfigs(owner(request))).map(adConfigView)));

  app.get('/playback/ad-configs/:name', {
    config: { auth: 'api' },
    schema: { tags, summary: 'One ad configuration', params: AdConfigParams, response: { 200: AdConfigSchema, ...problemResponses(400, 401, 404) } },
  }, async (request) => adConfigView(await deps.catalog.getAdConfig(owner(request), request.params.name)));

  app.put('/playback/ad-configs/:name', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Create or replace an ad configuration; one without ad_server_url or ad assets is saved but not ready (playback answers 122)',
      params: AdConfigParams,
      body: PutAdConfigBody,
      response: { 200: AdConfigSchema, ...problemResponses(400, 401) },
    },
  }, async (request) => {
    const b = request.body;
    return adConfigView(await deps.catalog.putAdConfig(owner(request), request.params.name, {
      adServerUrl: b.ad_server_url ?? null,
      adAssetIds: b.ad_asset_ids ?? [],
      simulatedLatencyMs: b.simulated_latency_ms ?? 0,
      timeoutMs: b.timeout_ms ?? DEFAULT_AD_TIMEOUT_MS,
    }));
  });

  app.delete('/playback/ad-configs/:name', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Delete an ad configuration (URLs naming it answer 121)', params: AdConfigParams, response: { 200: DeletedSchema, ...problemResponses(400, 401, 404) } },
  }, async (request) => {
    await deps.catalog.deleteAdConfig(owner(request), request.params.name);
    return deletedView(`/api/v4/playback/ad-configs/${encodeURIComponent(request.params.name)}`, 'PlaybackAdConfig');
  });

  app.get('/playback/drm-policies', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Your DRM policies with the provider\'s verdict', response: { 200: DrmPolicyCollection, ...problemResponses(401) } },
  }, async (request) => collection('drm-policies', (await deps.catalog.listDrmPolicies(owner(request))).map((p) => drmPolicyView(p, deps.drm))));

  app.get('/playback/drm-policies/:name', {
    config: { auth: 'api' },
    schema: { tags, summary: 'One DRM policy', params: DrmPolicyParams, response: { 200: DrmPolicySchema, ...problemResponses(400, 401, 404) } },
  }, async (request) => drmPolicyView(await deps.catalog.getDrmPolicy(owner(request), request.params.name), deps.drm));

  app.put('/playback/drm-policies/:name', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Create or replace a DRM policy; saved as given, with the provider\'s verdict (a rejected one makes playback answer 114)',
      params: DrmPolicyParams,
      body: PutDrmPolicyBody,
      response: { 200: DrmPolicySchema, ...problemResponses(400, 401) },
    },
  }, async (request) =>
    drmPolicyView(await deps.catalog.putDrmPolicy(owner(request), request.params.name, request.body.provider, request.body.settings ?? {}), deps.drm));

  app.delete('/playback/drm-policies/:name', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Delete a DRM policy (URLs naming it answer 114)', params: DrmPolicyParams, response: { 200: DeletedSchema, ...problemResponses(400, 401, 404) } },
  }, async (request) => {
    await deps.catalog.deleteDrmPolicy(owner(request), request.params.name);
    return deletedView(`/api/v4/playback/drm-policies/${encodeURIComponent(request.params.name)}`, 'PlaybackDrmPolicy');
  });

  app.get('/playback/private-assets', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Your private assets and whom they are shared with', response: { 200: PrivateAssetCollection, ...problemResponses(401) } },
  }, async (request) => collection('private-assets', (await deps.catalog.listPrivateAssets(owner(request))).map(privateAssetView)));

  app.get('/playback/private-assets/:asset_id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'One private asset (404: the asset is not private)', params: PrivateAssetParams, response: { 200: PrivateAssetSchema, ...problemResponses(400, 401, 404) } },
  }, async (request) => privateAssetView(await deps.catalog.getPrivateAsset(owner(request), request.params.asset_id)));

  app.put('/playback/private-assets/:asset_id', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Make an asset private, shared only with the workspaces listed (others playing it with coid answer 102)',
      params: PrivateAssetParams,
      body: PutPrivateAssetBody,
      response: { 200: PrivateAssetSchema, ...problemResponses(400, 401) },
    },
  }, async (request) => privateAssetView(await deps.catalog.putPrivateAsset(owner(request), request.params.asset_id, request.body.shared_with ?? [])));

  app.delete('/playback/private-assets/:asset_id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Make an asset public again', params: PrivateAssetParams, response: { 200: DeletedSchema, ...problemResponses(400, 401, 404) } },
  }, async (request) => {
    await deps.catalog.deletePrivateAsset(owner(request), request.params.asset_id);
    return deletedView(`/api/v4/playback/private-assets/${encodeURIComponent(request.params.asset_id)}`, 'PlaybackPrivateAsset');
  });
}
