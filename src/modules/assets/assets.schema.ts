import { Type, type Static } from '@sinclair/typebox';

/**
 * Request and response schemas of the asset library.
 *
 * - `title`: 1-200 characters, at least one visible, no control characters; optional.
 * - Ids are system-defined 32-hex GUIDs.
 * - States: `uploaded` (received, waiting for a packaging slot) -> `processing` (probed and
 *   packaged by ffmpeg) -> `playable` (still packaged, its first segments play as a growing
 *   EVENT playlist) -> `ready` (packaged whole) or `failed` (with `failure_reason`, also from
 *   `playable`).
 */

export const assetStates = ['uploaded', 'processing', 'playable', 'ready', 'failed'] as const;
export type AssetState = (typeof assetStates)[number];

export const AssetStateSchema = Type.Union(
  assetStates.map((s) => Type.Literal(s)),
  { description: 'uploaded -> processing -> playable -> ready | failed (playable: plays while still packaged; a short asset may go from processing to ready)' },
);

// No control characters anywhere and at least one character that is neither blank nor control.
const TITLE_PATTERN = '^[^\\x00-\\x1f\\x7f]*[^\\x00-\\x20\\x7f][^\\x00-\\x1f\\x7f]*$';
export const TitleSchema = Type.String({ minLength: 1, maxLength: 200, pattern: TITLE_PATTERN, description: 'Display title, 1-200 characters' });

const ASSET_ID = '^[0-9a-f]{32}$';

export const AssetParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'Asset ID (32 hex digits)' }) });

export const UploadQuery = Type.Object({
  title: Type.Optional(TitleSchema),
});

export const AssetListQuery = Type.Object(
  {
    state: Type.Optional(AssetStateSchema),
    source_slicer_id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Recordings of this managed slicer only' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, 1-100. Without it, every asset (after the cursor, if given) in one answer' })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'Opaque cursor of the next page (from the Link header)' })),
  },
  { description: 'All optional, as for the slicer task list: without any, every asset of the workspace, newest first' },
);
export type AssetListQuery = Static<typeof AssetListQuery>;

export const AssetUpdateBody = Type.Object({ title: TitleSchema }, { additionalProperties: false, description: 'The fields to change' });
export type AssetUpdateBody = Static<typeof AssetUpdateBody>;

export const RenditionSummarySchema = Type.Object({
  name: Type.String({ description: 'e.g. 720p' }),
  width: Type.Integer(),
  height: Type.Integer(),
  bandwidth: Type.Integer({ description: 'Peak bit rate of its segments, bits/s' }),
});
export type RenditionSummary = Static<typeof RenditionSummarySchema>;

export const AssetSchema = Type.Object(
  {
    '@id': Type.String({ description: '/api/v4/assets/<id>' }),
    '@type': Type.Literal('Asset'),
    id: Type.String({ pattern: ASSET_ID, description: 'System-defined asset ID (32 hex digits); the id playback URLs and statistics use' }),
    title: Type.Union([Type.String(), Type.Null()]),
    state: AssetStateSchema,
    progress: Type.Integer({ minimum: 0, maximum: 100, description: 'Packaging done, in percent: 0 until processing, 100 once ready' }),
    duration_s: Type.Union([Type.Number(), Type.Null()], { description: 'Duration of the packaged media in seconds: packaged so far while playable, the whole once ready; null before' }),
    renditions: Type.Array(RenditionSummarySchema, { description: 'The HLS renditions, highest first (playable and ready; empty before; bandwidths of a playable asset are those of its segments so far)' }),
    poster: Type.Union([Type.String(), Type.Null()], { description: 'Path of the poster image (JPEG, a signed GET like this resource; ready only)' }),
    failure_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why probing or packaging failed (failed only)' }),
    size_bytes: Type.Integer({ description: 'Size of the uploaded file (a recording: of its files)' }),
    source_slicer_id: Type.Union([Type.String(), Type.Null()], { description: 'A recorded live event: the managed slicer it was recorded from (it may since have been deleted); null for uploads' }),
    recording_started_at: Type.Union([Type.Integer(), Type.Null()], { description: 'A recorded live event: when it started (its first segment), Unix seconds; null for uploads' }),
    recording_ended_at: Type.Union([Type.Integer(), Type.Null()], { description: 'A recorded live event: when it ended (the end of its last segment), Unix seconds; null for uploads' }),
    created_at: Type.Integer({ description: 'Unix seconds' }),
    updated_at: Type.Integer({ description: 'Unix seconds' }),
  },
  { description: 'A media file of the library and its HLS packaging' },
);
export type AssetView = Static<typeof AssetSchema>;

export const AssetCollection = Type.Object({
  '@id': Type.String({ description: 'The path that was called' }),
  '@type': Type.Literal('Collection'),
  items: Type.Array(AssetSchema),
  total_items: Type.Integer({ description: 'Assets matching the filter, over all pages' }),
});
export type AssetCollectionView = Static<typeof AssetCollection>;

export const AssetDeletedSchema = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('Asset'),
  id: Type.String(),
  message: Type.Literal('Deleted'),
});
export type AssetDeletedView = Static<typeof AssetDeletedSchema>;

/** The media types an upload may be sent as (`video/*` and `audio/*` stand for every subtype). */
export const uploadContentTypes = ['application/octet-stream', 'video/*', 'audio/*'] as const;
