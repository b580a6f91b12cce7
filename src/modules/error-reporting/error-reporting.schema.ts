import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { deliveryOutcomeKinds, loggedOutcomeKinds } from '../../platform/outbound/delivery-outcome.js';
import { dropReasons } from './delivery-log.js';

const Outcome = Type.Union(
  deliveryOutcomeKinds.map((k) => Type.Literal(k)),
  { description: 'delivered (200), non_200, timeout, refused (connect error), tls_error, reset (socket closed), ssrf_refused' },
);

const LoggedOutcome = Type.Union(
  loggedOutcomeKinds.map((k) => Type.Literal(k)),
  {
    description: 'delivered (200), non_200, timeout, refused (connect error), tls_error, reset (socket closed), ssrf_refused; '
      + 'dropped: never sent, the dispatcher dropped the report (drop_reason says why)',
  },
);

const dropReasonDescription = 'throttled (queue full), paused (endpoint paused after a failure), discarded (pending when the endpoint was unreachable or the callback changed), overloaded (process-wide bound)';

const CallbackUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'http(s) URL that receives a signed POST for every playback error of the workspace',
});

export const SettingsSchema = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('ErrorReportingSettings'),
  owner: Type.String({ description: 'Workspace ID' }),
  callback_url: Type.Union([CallbackUrl, Type.Null()]),
  enabled: Type.Boolean(),
  signing_secret: Type.String({ description: 'Standard Webhooks secret (whsec_…) that signs every callback; verify the webhook-signature header with it' }),
  previous_signing_secret_expires_at: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Unix ms until which the secret replaced by the last rotation still signs (a second v1 signature), or null',
  }),
  updated_at: Type.Integer({ description: 'Unix milliseconds' }),
});

export const PutSettingsBody = Type.Object(
  {
    callback_url: CallbackUrl,
    enabled: Type.Optional(Type.Boolean({ default: true, description: 'Default true' })),
  },
  { additionalProperties: false },
);

export const TestBody = Type.Object(
  { callback_url: Type.Optional(CallbackUrl) },
  { additionalProperties: false, description: 'Without callback_url, the saved one is tested' },
);

export const ObservationSchema = Type.Object({
  outcome: Outcome,
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status received, or null when none' }),
  latency_ms: Type.Number(),
  detail: Type.Optional(Type.String()),
  address: Type.Optional(Type.String({ description: 'The address the request was sent to' })),
  response_excerpt: Type.Optional(Type.String({ description: 'Start of the receiver\'s answer' })),
});

export const TestResultSchema = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('CallbackTest'),
  callback_url: CallbackUrl,
  passed: Type.Boolean({ description: 'True when the test POST was answered 200 within 5 s' }),
  observed: ObservationSchema,
});

const count = Type.Integer({ minimum: 0 });

export const CountersSchema = Type.Object({
  delivered: count,
  failed: count,
  non_200: count,
  reset: count,
  unreachable: count,
  by_outcome: Type.Object(Object.fromEntries(deliveryOutcomeKinds.map((k) => [k, count]))),
  dropped: Type.Object(Object.fromEntries(dropReasons.map((r) => [r, count])), {
    description: `Reports not sent, by reason: ${dropReasonDescription}. Each is in the delivery log too (outcome dropped) unless the log's queue was full`,
  }),
});

export const AttemptSchema = Type.Object({
  ts: Type.Integer({ description: 'Unix ms when the attempt ended' }),
  ts_iso: Type.String(),
  webhook_id: Type.String(),
  url: Type.String(),
  outcome: Outcome,
  status: Type.Union([Type.Integer(), Type.Null()]),
  latency_ms: Type.Number(),
  detail: Type.Optional(Type.String()),
});

export const DeliveriesSchema = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('ErrorReportDeliveries'),
  callback_url: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean(),
  counters: CountersSchema,
  endpoint: Type.Union([
    Type.Object({
      paused_until: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix ms, or null when not paused' }),
      queued: count,
      in_flight: count,
      consecutive_failures: count,
    }),
    Type.Null(),
  ]),
  recent: Type.Array(AttemptSchema, { description: 'Most recent attempts of this instance, newest first' }),
});

const LoggedAttemptFields = {
  '@id': Type.String({ description: 'The path of this attempt' }),
  '@type': Type.Literal('DeliveryAttempt'),
  id: Type.String({ description: 'Attempt id (att_…)' }),
  ts: Type.Integer({ description: 'Unix ms when the attempt ended' }),
  ts_iso: Type.String(),
  webhook_id: Type.String({ description: 'The webhook-id header sent; a resend keeps the id of the report it resends' }),
  url: Type.String({ description: 'Where the report was POSTed (for a dropped report: where it would have been)' }),
  outcome: LoggedOutcome,
  drop_reason: Type.Union([...dropReasons.map((r) => Type.Literal(r)), Type.Null()], {
    description: `Why a dropped report was not sent (outcome dropped): ${dropReasonDescription}; null for an attempt that was sent`,
  }),
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status received, or null when none' }),
  latency_ms: Type.Integer({ minimum: 0, description: 'Milliseconds from sending to the response headers (or to the failure); 0 when dropped' }),
  detail: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed (an error code, the redirect not followed, the drop reason), or null' }),
  resend_of: Type.Union([Type.String(), Type.Null()], { description: 'The attempt this one resent (POST …/resend), or null' }),
};

export const LoggedAttemptSchema = Type.Object(LoggedAttemptFields);

export const LoggedAttemptDetailSchema = Type.Object({
  ...LoggedAttemptFields,
  payload: Type.Object(
    {
      owner: Type.String(),
      subtype: Type.String(),
      url: Type.String(),
      ip: Type.String(),
      code: Type.Integer(),
      ua: Type.String(),
      msg: Type.String(),
      timestamp: Type.Integer(),
    },
    { description: 'The error report sent (the request body, parsed)' },
  ),
  request: Type.Object(
    {
      body: Type.String({ description: 'The exact body sent (dropped: that would have been sent): the bytes a receiver verifies the signature over' }),
      headers: Type.Object(
        {
          'webhook-id': Type.String(),
          'webhook-timestamp': Type.String({ description: 'Unix seconds when the request was signed' }),
          'webhook-signature': Type.String({ description: 'v1,<base64 HMAC-SHA256>, space-separated when two secrets sign (a rotation)' }),
        },
        { description: 'The Standard Webhooks headers sent (dropped: signed when dropped; the signature is empty when the callback was already removed)' },
      ),
    },
    { description: 'What was POSTed, as sent (dropped: what would have been POSTed)' },
  ),
});

export const LoggedAttemptCollection = Type.Object({
  '@id': Type.String({ description: 'The path that was called' }),
  '@type': Type.Literal('Collection'),
  items: Type.Array(LoggedAttemptSchema, { description: 'Newest first' }),
  total_items: Type.Integer({ minimum: 0, description: 'Attempts matching the filter, over all pages' }),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Cursor of the next page (also in the Link header), or null on the last page' }),
});

export const LoggedAttemptQuery = Type.Object({
  outcome: Type.Optional(LoggedOutcome),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Page size, 1-100 (default 50)' })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'Opaque cursor of the next page (next_cursor of the previous one)' })),
});

export const AttemptParams = Type.Object({
  attempt_id: Type.String({ minLength: 1, maxLength: 64, description: 'Attempt id (att_…)' }),
});

export type SettingsView = Static<typeof SettingsSchema>;
export type LoggedAttemptView = Static<typeof LoggedAttemptSchema>;
export type LoggedAttemptDetailView = Static<typeof LoggedAttemptDetailSchema>;
export type LoggedAttemptCollectionView = Static<typeof LoggedAttemptCollection>;
export type LoggedAttemptQueryInput = Static<typeof LoggedAttemptQuery>;
export type PutSettingsInput = Static<typeof PutSettingsBody>;
export type TestResultView = Static<typeof TestResultSchema>;
export type DeliveriesView = Static<typeof DeliveriesSchema>;
