import { authOf } from '../../platform/http/auth-hook.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import {
  ClippingProfile,
  ClippingProfileCreateBody,
  ClippingProfileIdParams,
  ClippingProfileQuery,
  SyndicationRegion,
  collectionOf,
} from './syndication.schema.js';
import type { ClippingProfileService } from './clipping-profile.service.js';
import { clippingProfileView, collection, regionView } from './syndication.view.js';

const tags = ['syndication'];

/** Regions (from configuration) and clipping profiles. */
export async function catalogRoutes(api: App, deps: { clippingProfiles: ClippingProfileService; regions: readonly string[] }): Promise<void> {
  const { clippingProfiles } = deps;

  api.get('/syndication-regions', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Regions publishing schedules may use', response: { 200: collectionOf(SyndicationRegion, 'Regions'), ...problemResponses(401) } },
  }, async () => collection('/syndication-regions', deps.regions.map(regionView)));

  api.post('/syndication-clipping-profiles', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Create a clipping profile with its platform integrations', body: ClippingProfileCreateBody, response: { 201: ClippingProfile, ...problemResponses(400, 401) } },
  }, async (request, reply) => {
    const created = await clippingProfiles.create(authOf(request).owner, request.body);
    reply.code(201);
    return clippingProfileView(created);
  });

  api.get('/syndication-clipping-profiles', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Clipping profiles; with ?service=<platform>, those compatible with that platform',
      querystring: ClippingProfileQuery,
      response: { 200: collectionOf(ClippingProfile, 'Clipping profiles'), ...problemResponses(400, 401) },
    },
  }, async (request) => {
    const { service } = request.query;
    const items = (await clippingProfiles.list(authOf(request).owner, service)).map(clippingProfileView);
    const path = service === undefined ? '/syndication-clipping-profiles' : `/syndication-clipping-profiles?service=${encodeURIComponent(service)}`;
    return collection(path, items);
  });

  api.get('/syndication-clipping-profiles/:id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'A clipping profile', params: ClippingProfileIdParams, response: { 200: ClippingProfile, ...problemResponses(401, 404) } },
  }, async (request) => clippingProfileView(await clippingProfiles.get(authOf(request).owner, request.params.id)));
}
