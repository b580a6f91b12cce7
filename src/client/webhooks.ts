import type {
  SubscriptionCollectionView, SubscriptionCreateInput, SubscriptionDeletedView, SubscriptionPatchInput, SubscriptionView, SubscriptionWithSecretView,
  WebhookAttemptCollectionView, WebhookAttemptDetailView, WebhookAttemptQueryInput,
} from '../modules/webhooks/webhooks.schema.js';
import type { ClientCore } from './client.js';

const subscriptionPath = (id: string) => `/api/v4/webhooks/subscriptions/${encodeURIComponent(id)}`;

/** Operational event webhooks: endpoints subscribed to asset, live and publishing events, delivered signed with retries. */
export class WebhooksApi {
  constructor(private readonly core: ClientCore) {}

  /** Subscribes an endpoint; the answer carries `signing_secret`, shown this once. */
  createSubscription(input: SubscriptionCreateInput): Promise<SubscriptionWithSecretView> {
    return this.core.request<SubscriptionWithSecretView>('POST', '/api/v4/webhooks/subscriptions', { body: input });
  }

  listSubscriptions(): Promise<SubscriptionCollectionView> {
    return this.core.request<SubscriptionCollectionView>('GET', '/api/v4/webhooks/subscriptions');
  }

  getSubscription(id: string): Promise<SubscriptionView> {
    return this.core.request<SubscriptionView>('GET', subscriptionPath(id));
  }

  /** Changes the fields given (url, event_types, description, enabled). */
  updateSubscription(id: string, patch: SubscriptionPatchInput): Promise<SubscriptionView> {
    return this.core.request<SubscriptionView>('PATCH', subscriptionPath(id), { body: patch });
  }

  /** Deletes the subscription and its pending deliveries. */
  deleteSubscription(id: string): Promise<SubscriptionDeletedView> {
    return this.core.request<SubscriptionDeletedView>('DELETE', subscriptionPath(id));
  }

  /** A new signing secret (in the answer, this once); the old one keeps signing for 24 hours. */
  rotateSecret(id: string): Promise<SubscriptionWithSecretView> {
    return this.core.request<SubscriptionWithSecretView>('POST', `${subscriptionPath(id)}/rotate-secret`);
  }

  /** The delivery log of events (retries and resends included), newest first; `next_cursor` continues it. */
  listAttempts(query: WebhookAttemptQueryInput = {}): Promise<WebhookAttemptCollectionView> {
    return this.core.request<WebhookAttemptCollectionView>('GET', '/api/v4/webhooks/attempts', { query: { ...query } });
  }

  /** One attempt with the event, the exact body and the signature headers. */
  getAttempt(attemptId: string): Promise<WebhookAttemptDetailView> {
    return this.core.request<WebhookAttemptDetailView>('GET', `/api/v4/webhooks/attempts/${encodeURIComponent(attemptId)}`);
  }

  /** Sends a logged event again now (signed anew, same webhook-id) and returns the new attempt. */
  resend(attemptId: string): Promise<WebhookAttemptDetailView> {
    return this.core.request<WebhookAttemptDetailView>('POST', `/api/v4/webhooks/attempts/${encodeURIComponent(attemptId)}/resend`);
  }
}
