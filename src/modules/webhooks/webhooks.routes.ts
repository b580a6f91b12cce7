import { authOf } from '../../platform/http/auth-hook.js';
import { AppError } from '../../platform/errors.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import {
  SubscriptionCollection, SubscriptionCreateBody, SubscriptionDeleted, SubscriptionParams, SubscriptionPatchBody, SubscriptionSchema,
  SubscriptionWithSecretSchema, WebhookAttemptCollection, WebhookAttemptDetailSchema, WebhookAttemptParams, WebhookAttemptQuery,
} from './webhooks.schema.js';
import type { WebhookAttemptQueryInput } from './webhooks.schema.js';
import type { WebhookService } from './webhooks.service.js';
import { ATTEMPTS_PATH, SUBSCRIPTIONS_PATH, attemptCollectionView, attemptDetailView } from './webhooks.view.js';

const tags = ['webhooks'];

/** The attempts path that was called, with its filter and page but without the signature. */
const attemptsSelfPath = (query: WebhookAttemptQueryInput, cursor?: string): string => {
  const params = new URLSearchParams();
  if (query.subscription_id !== undefined) params.set('subscription_id', query.subscription_id);
  if (query.outcome !== undefined) params.set('outcome', query.outcome);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (cursor !== undefined) params.set('cursor', cursor);
  const search = params.toString();
  return search ? `${ATTEMPTS_PATH}?${search}` : ATTEMPTS_PATH;
};

/** Operational event webhooks: subscriptions (create, list, get, update, delete, rotate secret) and their delivery log with resend. */
export async function webhookRoutes(app: App, service: WebhookService): Promise<void> {
  app.post('/webhooks/subscriptions', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Subscribe an endpoint to operational events; the answer shows its signing secret, this once',
      description: 'At most PLAYLINE_WEBHOOK_MAX_SUBSCRIPTIONS per workspace (409 quota_exceeded beyond). The URL goes through the outbound guard: loopback, private, link-local and metadata addresses are refused (422 callback_url_refused) unless PLAYLINE_OUTBOUND_ALLOWLIST permits them.',
      body: SubscriptionCreateBody,
      response: { 201: SubscriptionWithSecretSchema, ...problemResponses(400, 401, 409, 422) },
    },
  }, async (request, reply) => {
    const created = await service.create(authOf(request).owner, request.body);
    void reply.code(201);
    return created;
  });

  app.get('/webhooks/subscriptions', {
    config: { auth: 'api' },
    schema: { tags, summary: 'The workspace\'s webhook subscriptions (without secrets)', response: { 200: SubscriptionCollection, ...problemResponses(401) } },
  }, async (request) => {
    const items = await service.list(authOf(request).owner);
    return { '@id': SUBSCRIPTIONS_PATH, '@type': 'Collection' as const, items, total_items: items.length };
  });

  app.get('/webhooks/subscriptions/:subscription_id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'One webhook subscription (without its secret)', params: SubscriptionParams, response: { 200: SubscriptionSchema, ...problemResponses(401, 404) } },
  }, async (request) => service.get(authOf(request).owner, request.params.subscription_id));

  app.patch('/webhooks/subscriptions/:subscription_id', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Change a subscription\'s URL, event types, description or enabled flag (the fields given)',
      params: SubscriptionParams,
      body: SubscriptionPatchBody,
      response: { 200: SubscriptionSchema, ...problemResponses(400, 401, 404, 422) },
    },
  }, async (request) => service.update(authOf(request).owner, request.params.subscription_id, request.body));

  app.delete('/webhooks/subscriptions/:subscription_id', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Delete a subscription and the deliveries still pending for it (its logged attempts stay)',
      params: SubscriptionParams,
      response: { 200: SubscriptionDeleted, ...problemResponses(401, 404) },
    },
  }, async (request) => {
    const { subscription_id: id } = request.params;
    await service.remove(authOf(request).owner, id);
    return { '@id': `${SUBSCRIPTIONS_PATH}/${id}`, '@type': 'WebhookSubscription' as const, message: 'Deleted' as const };
  });

  app.post('/webhooks/subscriptions/:subscription_id/rotate-secret', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Replace the signing secret (shown this once); the old one keeps signing (a second signature) for 24 hours',
      params: SubscriptionParams,
      response: { 200: SubscriptionWithSecretSchema, ...problemResponses(401, 404) },
    },
  }, async (request) => service.rotateSecret(authOf(request).owner, request.params.subscription_id));

  app.get('/webhooks/attempts', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'The delivery log of operational events: every attempt (all instances, retries and resends), newest first',
      description: 'Shared with Error Reporting\'s log: kept PLAYLINE_DELIVERY_LOG_RETENTION_H hours, at most PLAYLINE_DELIVERY_LOG_MAX_PER_WORKSPACE attempts per workspace (both kinds together). The next page is in next_cursor and the Link header.',
      querystring: WebhookAttemptQuery,
      response: { 200: WebhookAttemptCollection, ...problemResponses(400, 401, 404) },
    },
  }, async (request, reply) => {
    const page = await service.listAttempts(authOf(request).owner, request.query);
    if (page.nextCursor !== undefined) void reply.header('link', `<${attemptsSelfPath(request.query, page.nextCursor)}>; rel="next"`);
    return attemptCollectionView(attemptsSelfPath(request.query, request.query.cursor), page.items, page.total, page.nextCursor);
  });

  app.get('/webhooks/attempts/:attempt_id', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'One logged attempt with the event sent, the exact body and the signature headers',
      params: WebhookAttemptParams,
      response: { 200: WebhookAttemptDetailSchema, ...problemResponses(401, 404) },
    },
  }, async (request) => attemptDetailView(await service.getAttempt(authOf(request).owner, request.params.attempt_id)));

  app.post('/webhooks/attempts/:attempt_id/resend', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Send a logged event (a dropped one too) again to its subscription\'s current URL: one attempt now, signed anew (same webhook-id), logged; answers its outcome',
      params: WebhookAttemptParams,
      response: { 200: WebhookAttemptDetailSchema, ...problemResponses(401, 404, 429) },
    },
  }, async (request, reply) => {
    try {
      return attemptDetailView(await service.resend(authOf(request).owner, request.params.attempt_id));
    } catch (err) {
      const retryAfter = err instanceof AppError && err.code === 'throttled' ? err.extra?.retry_after_s : undefined;
      if (typeof retryAfter === 'number') void reply.header('retry-after', String(retryAfter));
      throw err;
    }
  });
}
