import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { operationalEventTypes } from '../../platform/operational-events.js';
import { loggedOutcomeKinds } from '../../platform/outbound/delivery-outcome.js';

export const EventType = Type.Union(operationalEventTypes.map((t) => Type.Literal(t)), {
  description: 'asset.ready, asset.failed, live.started, live.ended, recording.ready, publishing.active, publishing.error',
});

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL that receives a signed POST per event; loopback, private, link-local and metadata addresses are refused unless PLAYLINE_OUTBOUND_ALLOWLIST permits them' });
const EventTypes = Type.Array(EventType, { minItems: 1, maxItems: operationalEventTypes.length, uniqueItems: true, description: 'The event types this endpoint receives' });
const Description = Type.String({ maxLength: 512, description: 'Free text for your own reference' });

export const SubscriptionCreateBody = Type.Object(
  {
    url: Url,
    event_types: EventTypes,
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ default: true, description: 'Default true; a disabled subscription gets no new events (pending ones still go)' })),
  },
  { additionalProperties: false },
);

export const SubscriptionPatchBody = Type.Object(
  {
    url: Type.Optional(Url),
    event_types: Type.Optional(EventTypes),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);

const SubscriptionFields = {
  '@id': Type.String(),
  '@type': Type.Literal('WebhookSubscription'),
  id: Type.String({ description: 'Subscription id (whs_…)' }),
  url: Type.String(),
  event_types: Type.Array(EventType),
  description: Type.String(),
  enabled: Type.Boolean(),
  pending_deliveries: Type.Integer({ minimum: 0, description: 'Events not yet delivered to this endpoint (waiting for their next attempt)' }),
  previous_signing_secret_expires_at: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Unix ms until which the secret replaced by the last rotation still signs (a second v1 signature), or null',
  }),
  created_at: Type.Integer({ description: 'Unix milliseconds' }),
  updated_at: Type.Integer({ description: 'Unix milliseconds' }),
};

export const SubscriptionSchema = Type.Object(SubscriptionFields, { description: 'A subscription; its signing secret is shown only when it is created or rotated' });

export const SubscriptionWithSecretSchema = Type.Object(
  {
    ...SubscriptionFields,
    signing_secret: Type.String({ description: 'Standard Webhooks secret (whsec_…) that signs every delivery. Shown this once: store it now' }),
  },
  { description: 'A subscription just created, or its secret just rotated: the only answers that carry the secret' },
);

export const SubscriptionCollection = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('Collection'),
  items: Type.Array(SubscriptionSchema),
  total_items: Type.Integer({ minimum: 0 }),
});

export const SubscriptionDeleted = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('WebhookSubscription'),
  message: Type.Literal('Deleted'),
});

export const SubscriptionParams = Type.Object({
  subscription_id: Type.String({ minLength: 1, maxLength: 64, description: 'Subscription id (whs_…)' }),
});

export const WebhookAttemptParams = Type.Object({
  attempt_id: Type.String({ minLength: 1, maxLength: 64, description: 'Attempt id (att_…)' }),
});

const LoggedOutcome = Type.Union(loggedOutcomeKinds.map((k) => Type.Literal(k)), {
  description: 'delivered (200), non_200, timeout, refused (connect error), tls_error, reset (socket closed), ssrf_refused; dropped: never sent (detail overflow: the endpoint had PLAYLINE_WEBHOOK_MAX_PENDING deliveries pending)',
});

export const WebhookAttemptQuery = Type.Object({
  subscription_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only this subscription\'s attempts' })),
  outcome: Type.Optional(LoggedOutcome),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Page size, 1-100 (default 50)' })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'Opaque cursor of the next page (next_cursor of the previous one)' })),
});

const WebhookAttemptFields = {
  '@id': Type.String({ description: 'The path of this attempt' }),
  '@type': Type.Literal('WebhookAttempt'),
  id: Type.String({ description: 'Attempt id (att_…)' }),
  subscription_id: Type.String(),
  ts: Type.Integer({ description: 'Unix ms when the attempt ended' }),
  ts_iso: Type.String(),
  webhook_id: Type.String({ description: 'The webhook-id sent: the same for every attempt and resend of one event (deduplicate on it)' }),
  url: Type.String(),
  outcome: LoggedOutcome,
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status received, or null when none' }),
  latency_ms: Type.Integer({ minimum: 0 }),
  detail: Type.Union([Type.String(), Type.Null()], { description: 'Which attempt it was, why it failed and when the next one is due, or null' }),
  resend_of: Type.Union([Type.String(), Type.Null()], { description: 'The attempt this one resent (POST …/resend), or null' }),
};

export const WebhookAttemptSchema = Type.Object(WebhookAttemptFields);

export const WebhookAttemptDetailSchema = Type.Object({
  ...WebhookAttemptFields,
  event: Type.Object(
    {
      type: EventType,
      timestamp: Type.String({ description: 'When the event happened (UTC, microseconds)' }),
      data: Type.Record(Type.String(), Type.Unknown(), { description: 'The event\'s fields; always owner (the workspace id)' }),
    },
    { description: 'The event sent (the request body, parsed)' },
  ),
  request: Type.Object({
    body: Type.String({ description: 'The exact body sent: the bytes a receiver verifies the signature over' }),
    headers: Type.Object({
      'webhook-id': Type.String(),
      'webhook-timestamp': Type.String({ description: 'Unix seconds when the request was signed (empty for a dropped delivery)' }),
      'webhook-signature': Type.String({ description: 'v1,<base64 HMAC-SHA256>, space-separated when two secrets sign (a rotation); empty for a dropped delivery' }),
    }),
  }),
});

export const WebhookAttemptCollection = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('Collection'),
  items: Type.Array(WebhookAttemptSchema, { description: 'Newest first' }),
  total_items: Type.Integer({ minimum: 0 }),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Cursor of the next page (also in the Link header), or null on the last page' }),
});

export type SubscriptionCreateInput = Static<typeof SubscriptionCreateBody>;
export type SubscriptionPatchInput = Static<typeof SubscriptionPatchBody>;
export type SubscriptionView = Static<typeof SubscriptionSchema>;
export type SubscriptionWithSecretView = Static<typeof SubscriptionWithSecretSchema>;
export type SubscriptionCollectionView = Static<typeof SubscriptionCollection>;
export type SubscriptionDeletedView = Static<typeof SubscriptionDeleted>;
export type WebhookAttemptQueryInput = Static<typeof WebhookAttemptQuery>;
export type WebhookAttemptView = Static<typeof WebhookAttemptSchema>;
export type WebhookAttemptDetailView = Static<typeof WebhookAttemptDetailSchema>;
export type WebhookAttemptCollectionView = Static<typeof WebhookAttemptCollection>;

const owner = { owner: Type.String({ description: 'The workspace id' }) };
const slicerState = Type.String({ description: 'The slicer\'s live.state now' });
const scheduleFields = {
  ...owner,
  schedule_id: Type.String(),
  target_id: Type.String(),
  content_id: Type.String(),
  content_type: Type.String({ description: 'e (event) or c (channel)' }),
};

/** The `data` of each event type: what the OpenAPI document's `webhooks` describe, and what tests check deliveries against. */
export const operationalEventData = {
  'asset.ready': Type.Object({ ...owner, asset_id: Type.String(), duration_ms: Type.Integer({ minimum: 0 }), renditions: Type.Array(Type.String(), { description: 'Rendition names, e.g. 720p' }) }),
  'asset.failed': Type.Object({ ...owner, asset_id: Type.String(), reason: Type.String() }),
  'live.started': Type.Object({ ...owner, slicer_id: Type.String(), state: Type.Literal('live') }),
  'live.ended': Type.Object({ ...owner, slicer_id: Type.String(), state: slicerState }),
  'recording.ready': Type.Object(
    {
      ...owner,
      asset_id: Type.String({ description: 'The recording: an asset of the library' }),
      slicer_id: Type.String({ description: 'The slicer whose live event it recorded (source_slicer_id)' }),
      started_at: Type.Integer({ description: 'Unix ms when the live event started' }),
      ended_at: Type.Integer({ description: 'Unix ms when it ended' }),
      duration_ms: Type.Integer({ minimum: 0 }),
    },
    { description: 'A live event was recorded: its asset is ready (sent with an asset.ready for the same asset)' },
  ),
  'publishing.active': Type.Object({ ...scheduleFields, status: Type.Literal('active'), error: Type.Null() }),
  'publishing.error': Type.Object({ ...scheduleFields, status: Type.Literal('error'), error: Type.String({ description: 'Why publishing failed' }) }),
} as const;

/** The whole body of one event type: Standard Webhooks' recommended `type`, `timestamp`, `data`. */
export const operationalEventBody = <T extends keyof typeof operationalEventData>(type: T) =>
  Type.Object({
    type: Type.Literal(type),
    timestamp: Type.String({ description: 'When the event happened: UTC with microseconds, e.g. 2026-11-21T10:04:05.123000Z' }),
    data: operationalEventData[type],
  });
