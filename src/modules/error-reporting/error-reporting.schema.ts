import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { deliveryOutcomeKinds } from './delivery-outcome.js';
import { dropReasons } from './delivery-log.js';

const Outcome = Type.Union(
  deliveryOutcomeKinds.map((k) => Type.Literal(k)),
  { description: 'delivered (200), non_200, timeout, refused (connect error), tls_error, reset (socket closed), ssrf_refused' },
);

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
    description: 'throttled (queue full), paused (endpoint paused after a failure), discarded (pending when the endpoint was unreachable or the callback changed), overloaded (process-wide bound)',
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

export type SettingsView = Static<typeof SettingsSchema>;
export type PutSettingsInput = Static<typeof PutSettingsBody>;
export type TestInput = Static<typeof TestBody>;
export type TestResultView = Static<typeof TestResultSchema>;
export type DeliveriesView = Static<typeof DeliveriesSchema>;
