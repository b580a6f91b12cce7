import { operationalEventTypes } from '../../platform/operational-events.js';
import { operationalEventBody } from './webhooks.schema.js';

const whenSent: Record<(typeof operationalEventTypes)[number], string> = {
  'asset.ready': 'An uploaded asset finished packaging and plays.',
  'asset.failed': 'Packaging of an asset failed.',
  'live.started': 'A slicer\'s live.state became live: media from its encoder arrives.',
  'live.ended': 'A slicer\'s live.state left live (the source stopped or went away, the slicer was stopped, restarted or deleted).',
  'recording.ready': 'A live event\'s recording became a ready asset of the library (source_slicer_id names its slicer).',
  'publishing.active': 'A publishing schedule\'s status became active.',
  'publishing.error': 'A publishing schedule\'s status became error.',
};

const signatureHeaders = [
  { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' }, description: 'msg_…: the same for every attempt and resend of one event (deduplicate on it)' },
  { name: 'webhook-timestamp', in: 'header', required: true, schema: { type: 'string' }, description: 'Unix seconds when this attempt was signed' },
  { name: 'webhook-signature', in: 'header', required: true, schema: { type: 'string' }, description: 'v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>"> with the subscription\'s secret; two, space-separated, during a rotation' },
];

/**
 * The OpenAPI 3.1 `webhooks` object: one POST per operational event type, as a subscribed endpoint
 * receives it (body schema from webhooks.schema.ts, the Standard Webhooks headers, and the 200 that
 * ends the retries).
 */
export const operationalEventWebhooks = (): Record<string, unknown> =>
  Object.fromEntries(
    operationalEventTypes.map((type) => [
      type,
      {
        post: {
          summary: whenSent[type],
          description: 'Signed per Standard Webhooks. Any answer but 200 within PLAYLINE_WEBHOOK_TIMEOUT_MS is retried at 5 s, 5 min, 30 min, 2 h, 5 h and 10 h (7 attempts).',
          tags: ['webhooks'],
          parameters: signatureHeaders,
          requestBody: { required: true, content: { 'application/json': { schema: operationalEventBody(type) } } },
          responses: { 200: { description: 'Received: no more attempts' } },
          security: [],
        },
      },
    ]),
  );
