import { authOf } from '../../platform/http/auth-hook.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import type { ContentShare } from './playback-catalog.js';
import type { PlaybackCatalogService } from './playback-catalog.service.js';
import { ContentShareCollection, ContentShareParams, ContentShareSchema, DeletedSchema, type ContentShareView } from './playback-edge.schema.js';
import { deletedView } from './playback-edge.view.js';

const tags = ['workspaces'];
const BASE = '/api/v4/workspace/shares';

export const contentShareView = (share: ContentShare): ContentShareView => ({
  '@id': `${BASE}/${encodeURIComponent(share.granteeId)}`,
  '@type': 'ContentShare',
  workspace_id: share.owner,
  grantee_id: share.granteeId,
  created_at: share.createdAt,
});

/**
 * `/api/v4/workspace/shares`: the workspaces the signing workspace lets play its content (assets
 * and live events) with their own signed URLs and `coid`. Content is private to its workspace
 * otherwise; a workspace manages only its own shares.
 */
export async function contentShareRoutes(app: App, catalog: PlaybackCatalogService): Promise<void> {
  const owner = (request: Parameters<typeof authOf>[0]) => authOf(request).owner;

  app.get('/workspace/shares', {
    config: { auth: 'api' },
    schema: { tags, summary: 'The workspaces that may play your content (assets and live events) with coid=<your workspace>', response: { 200: ContentShareCollection, ...problemResponses(401) } },
  }, async (request) => {
    const items = (await catalog.listShares(owner(request))).map(contentShareView);
    return { '@id': BASE, '@type': 'Collection' as const, items, total_items: items.length };
  });

  app.get('/workspace/shares/:grantee_id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'One share (404: your content is not shared with that workspace)', params: ContentShareParams, response: { 200: ContentShareSchema, ...problemResponses(400, 401, 404) } },
  }, async (request) => contentShareView(await catalog.getShare(owner(request), request.params.grantee_id)));

  app.put('/workspace/shares/:grantee_id', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Share your content with a workspace: its own signed URLs with coid=<your workspace> play your assets and live events (201 created, 200 if it already could; an asset with a private-asset entry still plays only for the workspaces that entry lists). Yourself: 422; an unknown workspace: 404',
      params: ContentShareParams,
      response: { 200: ContentShareSchema, 201: ContentShareSchema, ...problemResponses(400, 401, 404, 422) },
    },
  }, async (request, reply) => {
    const { share, created } = await catalog.putShare(owner(request), request.params.grantee_id);
    void reply.code(created ? 201 : 200);
    return contentShareView(share);
  });

  app.delete('/workspace/shares/:grantee_id', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Stop sharing your content with a workspace: its URLs naming you in coid answer 102 again (sessions already started play until their URL expires)',
      params: ContentShareParams,
      response: { 200: DeletedSchema, ...problemResponses(400, 401, 404) },
    },
  }, async (request) => {
    const share = await catalog.deleteShare(owner(request), request.params.grantee_id);
    return deletedView(contentShareView(share)['@id'], 'ContentShare');
  });
}
