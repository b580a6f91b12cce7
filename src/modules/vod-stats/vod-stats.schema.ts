import { Type } from '@sinclair/typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import { MAX_ID_LENGTH } from '../../platform/limits.js';

/** Most asset ids one search may name. */
export const MAX_SEARCH_IDS = 1000;
export const MAX_TOP = 100;

const Ms = (description: string) => Type.Number({ minimum: 0, description });

export const LatencySchema = Type.Object({
  mean_ms: Ms('Average latency in ms, rounded to 3 decimals (0 when there is no sample)'),
  min_ms: Ms('Lowest latency in ms (0 when there is no sample)'),
  max_ms: Ms('Highest latency in ms (0 when there is no sample)'),
});

export const StatsSchema = Type.Object({
  type: Type.Literal('vod'),
  version: Type.Literal(1, { description: 'Reserved for future use' }),
  errors: Type.Record(Type.String({ pattern: '^[0-9]+$' }), Type.Integer({ minimum: 1 }), {
    description: 'Playback error code -> number of playback sessions with it; {} when none',
  }),
  latency: Type.Object({
    manifest: LatencySchema,
    ad: Type.Optional(LatencySchema),
  }),
  sessions: Type.Object({
    requests: Type.Integer({ minimum: 0, description: 'Playback requests' }),
    manifest: Type.Integer({ minimum: 0, description: 'New sessions that loaded the manifest' }),
    ad: Type.Integer({ minimum: 0, description: 'New sessions that loaded ads' }),
    new: Type.Integer({ minimum: 0, description: 'Sessions for which playback started' }),
  }),
});
export type StatsBody = Static<typeof StatsSchema>;

const Ts = Type.Integer({ minimum: 0, description: 'Unix time in milliseconds' });
const TsIso = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z$',
  description: 'UTC, microseconds: 2026-11-21T10:04:05.123000Z',
});

export const VodStatsSchema = Type.Object({
  '@id': Type.String({ description: '/api/v4/monitoring/vod-stats/<asset_id>' }),
  '@type': Type.Literal('VodStats'),
  id: Type.String({ description: 'Asset id' }),
  stats: StatsSchema,
  ts: Ts,
  ts_iso: TsIso,
});
export type VodStatsBody = Static<typeof VodStatsSchema>;

export const VodStatsSummarySchema = Type.Object({
  '@id': Type.String({ description: '/api/v4/monitoring/vod-stats/owner-summary/<workspace_id>' }),
  '@type': Type.Literal('VodStatsSummary'),
  stats: StatsSchema,
  owner: Type.String({ description: 'Workspace id' }),
  ts: Ts,
  ts_iso: TsIso,
});
export type VodStatsSummaryBody = Static<typeof VodStatsSummarySchema>;

export const collectionOf = <T extends TSchema>(item: T) =>
  Type.Object({
    '@id': Type.String({ description: 'Path of the endpoint that was called' }),
    '@type': Type.Literal('Collection'),
    items: Type.Array(item),
    total_items: Type.Integer({ minimum: 0, description: 'Always the number of items returned' }),
  });

export const VodStatsCollectionSchema = collectionOf(VodStatsSchema);
export type VodStatsCollectionBody = Static<typeof VodStatsCollectionSchema>;

// Requests

export const AssetParamsSchema = Type.Object({ asset_id: Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }) });
export const OwnerParamsSchema = Type.Object({ workspace_id: Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }) });

export const AllAssetsQuerySchema = Type.Object({
  owner: Type.Optional(Type.String({ minLength: 1, description: 'Workspace id; default the authenticated one' })),
  top: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_TOP, default: MAX_TOP, description: 'How many assets, 1-100' }),
  ),
});

export const SearchBodySchema = Type.Object({
  asset_ids: Type.Array(Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }), { minItems: 1, maxItems: MAX_SEARCH_IDS }),
});

export const SearchQuerySchema = Type.Object({
  asset_ids: Type.String({ minLength: 1, description: 'Comma-separated asset ids (1-1000)' }),
});

/** The answer of the admin API's statistics rebuild (cluster mode). */
export const RebuildResultSchema = Type.Object({
  '@type': Type.Literal('StatsRebuild'),
  batches: Type.Integer({ description: 'Journal batches replayed (the 24-hour window plus one hour)' }),
  events: Type.Integer({ description: 'Events counted again' }),
  last_seq: Type.Integer({ description: 'Journal position of the last batch replayed' }),
});
export type RebuildResultView = Static<typeof RebuildResultSchema>;

// History (per-minute points over the 24-hour serving window)

/** The named ranges of the history endpoint, in minutes (ending now). */
export const HISTORY_RANGES = { '15m': 15, '1h': 60, '6h': 360, '24h': 1440 } as const;
export type HistoryRange = keyof typeof HISTORY_RANGES;
/** The range of a history query that names none. */
export const DEFAULT_HISTORY_RANGE: HistoryRange = '1h';

/** 9999-12-31T23:59:59Z: the last second a date can show. */
const MAX_UNIX_S = 253_402_300_799;

export const HistoryQuerySchema = Type.Object({
  asset_id: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH, description: "One asset's history; without it, the workspace's (every asset, and events counted for the workspace only)" })),
  range: Type.Optional(Type.Union([Type.Literal('15m'), Type.Literal('1h'), Type.Literal('6h'), Type.Literal('24h')], { description: 'The last 15m, 1h, 6h or 24h, ending now (default 1h); not together with from/to' })),
  from: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_UNIX_S, description: 'Start, Unix seconds (default: an hour before to); before the 24-hour serving window it is clamped to its start' })),
  to: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_UNIX_S, description: 'End, Unix seconds, inclusive by minute (default: now; later is clamped to now)' })),
});
export type HistoryQuery = Static<typeof HistoryQuerySchema>;

const Count = (description: string) => Type.Integer({ minimum: 0, description });

const HistoryLatencySchema = Type.Object({
  samples: Count('Latency samples in the minute'),
  mean_ms: Ms('Average in ms, rounded to 3 decimals (0 without samples)'),
  min_ms: Ms('Lowest in ms (0 without samples)'),
  max_ms: Ms('Highest in ms (0 without samples)'),
});

export const HistoryPointSchema = Type.Object({
  ts: Type.Integer({ minimum: 0, description: "The minute's start, Unix ms" }),
  ts_iso: TsIso,
  sessions: Type.Object({
    requests: Count('Playback requests'),
    manifest: Count('New sessions that loaded the manifest'),
    ad: Count('New sessions that loaded ads'),
    new: Count('Sessions for which playback started'),
  }),
  errors: Type.Record(Type.String({ pattern: '^[0-9]+$' }), Type.Integer({ minimum: 1 }), {
    description: 'Playback error code -> sessions with it in the minute; {} when none',
  }),
  error_sessions: Count('Sessions with a playback error, over every code'),
  error_rate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
    description: 'error_sessions / max(requests, error_sessions), rounded to 4 decimals; null in a minute with neither',
  }),
  latency: Type.Object({ manifest: HistoryLatencySchema, ad: HistoryLatencySchema }),
  rebuffers: Count('Rebuffer reports (CMCD buffer starvation)'),
  startup: Type.Object(
    {
      samples: Count('Sessions started in the minute that reported a startup time'),
      mean_ms: Ms('Average startup time (playback request to first media segment) in ms, 3 decimals (0 without samples)'),
      max_ms: Ms('Longest startup time in ms (0 without samples)'),
    },
    { description: 'Startup time of the sessions started in the minute (from the playback edge and CMCD)' },
  ),
});
export type HistoryPointBody = Static<typeof HistoryPointSchema>;

export const VodStatsHistorySchema = Type.Object({
  '@id': Type.String({ description: '/api/v4/monitoring/vod-stats/history' }),
  '@type': Type.Literal('VodStatsHistory'),
  owner: Type.String({ description: 'Workspace id' }),
  asset_id: Type.Union([Type.String(), Type.Null()], { description: 'The asset asked for; null for the workspace' }),
  from: Type.Integer({ minimum: 0, description: 'Start of the range answered (after clamping to the serving window), Unix seconds' }),
  to: Type.Integer({ minimum: 0, description: 'End of the range answered (after clamping to now), Unix seconds' }),
  step_s: Type.Literal(60, { description: 'One point per UTC minute' }),
  points: Type.Array(HistoryPointSchema, { description: 'Ascending by ts; minutes without any event are left out (all zero)' }),
  total_points: Type.Integer({ minimum: 0 }),
});
export type VodStatsHistoryBody = Static<typeof VodStatsHistorySchema>;
