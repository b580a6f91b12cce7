import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { MAX_ID_LENGTH } from '../../platform/limits.js';

/** Longest accepted NDJSON line, in bytes. */
export const MAX_EVENT_LINE_BYTES = 16 * 1024;
/** Longest accepted request body, in bytes (413 beyond). */
export const MAX_EVENT_BATCH_BYTES = 16 * 1024 * 1024;
/** Longest owner, asset_id and session_id, in characters: the one id limit of the API (path parameters too). */
export { MAX_ID_LENGTH };
/** Longest url, ip, ua and msg of an error event, in characters. */
export const MAX_TEXT_LENGTH = 8 * 1024;
/** Largest `latency_ms` and `startup_ms` (one hour): anything longer is not a latency, and sums stay finite. */
export const MAX_LATENCY_MS = 3_600_000;
/** Rejections listed in a 202 answer; `rejected_count` counts them all. */
export const MAX_LISTED_REJECTIONS = 100;

export const PlaybackEventTypeSchema = Type.Union(
  [Type.Literal('request'), Type.Literal('manifest'), Type.Literal('ad'), Type.Literal('start'), Type.Literal('error'), Type.Literal('rebuffer')],
  { description: 'What happened (rebuffer: a player reported buffer starvation, CMCD bs; counted in history only)' },
);
export type PlaybackEventType = Static<typeof PlaybackEventTypeSchema>;

const Id = (description: string) => Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH, description });
const Text = (description: string) => Type.Optional(Type.String({ maxLength: MAX_TEXT_LENGTH, description }));

const eventProperties = {
  type: PlaybackEventTypeSchema,
  owner: Id('Workspace id: the authenticated workspace, or (ingest keys) one that granted it an ingest grant'),
  asset_id: Id('System asset id (GUID)'),
  session_id: Id('Playback session id'),
  latency_ms: Type.Optional(
    Type.Number({ minimum: 0, maximum: MAX_LATENCY_MS, description: 'manifest and ad events only: a finite number of ms, 0 to 3,600,000' }),
  ),
  error_code: Type.Optional(
    Type.Integer({ description: 'error events only: playback error code 100-130 or 999; unknown codes count as 999' }),
  ),
  http_status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: 'error events only' })),
  url: Text('error events only: playback URL that failed'),
  ip: Text('error events only: client IP address'),
  ua: Text('error events only: client User-Agent'),
  msg: Text('error events only: short description of the cause'),
  startup_ms: Type.Optional(
    Type.Number({ minimum: 0, maximum: MAX_LATENCY_MS, description: 'start events only: playback request to first media segment, in ms (history only)' }),
  ),
  workspace_only: Type.Optional(
    Type.Boolean({ description: 'Counts in the workspace summary and history only, never as an asset (e.g. a refused playback of an asset the library does not hold)' }),
  ),
};

/** One playback event as a client sends it (the declared shape; unknown members are ignored). */
export const PlaybackEventInputSchema = Type.Object(
  {
    ...eventProperties,
    ts: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Unix ms when it happened; default receipt time; later than receipt time is clamped to it',
      }),
    ),
  },
  { additionalProperties: true },
);

/** An accepted event after normalisation: `ts` is set, `error_code` is a known code on error events. */
export const PlaybackEventSchema = Type.Object({ ...eventProperties, ts: Type.Integer({ minimum: 0 }) });
export type PlaybackEvent = Static<typeof PlaybackEventSchema>;

export const EventRejectionSchema = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'NDJSON: 0-based line number; JSON: 0-based array index' }),
  code: Type.String({
    description:
      'Stable snake_case reason: malformed_json, line_too_long, not_an_object, invalid_field, ts_out_of_range, ' +
      'owner_mismatch, owner_not_allowed, unknown_owner, asset_limit_reached',
  }),
  detail: Type.String(),
});
export type EventRejection = Static<typeof EventRejectionSchema>;

/** Body of the 202 answer to `POST /monitoring/events`. */
export const IngestResultSchema = Type.Object(
  {
    accepted: Type.Integer({ minimum: 0, description: 'Events journaled durably and counted' }),
    rejected: Type.Array(EventRejectionSchema, {
      maxItems: MAX_LISTED_REJECTIONS,
      description: `The first ${MAX_LISTED_REJECTIONS} rejected events, by index`,
    }),
    rejected_count: Type.Integer({ minimum: 0, description: 'Every rejected event, listed or not' }),
  },
);
export type IngestResult = Static<typeof IngestResultSchema>;

/** Playback error codes reported as keys of `stats.errors`; anything else counts as 999. */
export const UNKNOWN_ERROR_CODE = 999;
export const isKnownErrorCode = (code: number): boolean => (code >= 100 && code <= 130) || code === 999;
