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
export type AllAssetsQuery = Static<typeof AllAssetsQuerySchema>;

export const SearchBodySchema = Type.Object({
  asset_ids: Type.Array(Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }), { minItems: 1, maxItems: MAX_SEARCH_IDS }),
});
export type SearchBody = Static<typeof SearchBodySchema>;

export const SearchQuerySchema = Type.Object({
  asset_ids: Type.String({ minLength: 1, description: 'Comma-separated asset ids (1-1000)' }),
});
export type SearchQuery = Static<typeof SearchQuerySchema>;

/** The answer of the admin API's statistics rebuild (cluster mode). */
export const RebuildResultSchema = Type.Object({
  '@type': Type.Literal('StatsRebuild'),
  batches: Type.Integer({ description: 'Journal batches replayed (the 24-hour window plus one hour)' }),
  events: Type.Integer({ description: 'Events counted again' }),
  last_seq: Type.Integer({ description: 'Journal position of the last batch replayed' }),
});
export type RebuildResultView = Static<typeof RebuildResultSchema>;
