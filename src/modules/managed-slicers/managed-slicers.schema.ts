import { Type, type Static, type TLiteral, type TUnion } from '@sinclair/typebox';
import { liveStates } from './live-status.js';

/**
 * Request and response schemas of managed slicers and their tasks.
 *
 * Validation rules (body schemas reject unknown keys):
 * - `name`: 1-100 characters, at least one visible character, no control characters.
 * - `description`: optional, at most 500 characters.
 * - `region`: the schema checks the shape; the service checks it against the configured region
 *   list (`PLAYLINE_REGIONS`), so operators can change regions without a release.
 * - `ingest_protocol`: rtmp, srt, rist, zixi or hls (push).
 * - `output_profile`: one of the fixed ABR ladders below, or `passthrough` (repackaging only).
 * - `dvr_window_s`: optional, 0-43200 and at most the deployment's PLAYLINE_LIVE_DVR_WINDOW_S
 *   (the service checks that bound); a create without it takes that setting.
 * - PATCH takes any non-empty subset of the create fields.
 */

export const ingestProtocols = ['rtmp', 'srt', 'rist', 'zixi', 'hls'] as const;
export const outputProfiles = ['sd-480p', 'hd-720p', 'hd-1080p', 'uhd-2160p', 'audio-only', 'passthrough'] as const;
export const taskOperations = ['CREATE', 'UPDATE', 'DELETE', 'RESTART'] as const;
export const taskStates = ['PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED'] as const;
export const slicerStates = ['provisioning', 'running', 'updating', 'restarting', 'deleting', 'deleted', 'failed'] as const;

type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> };

const literals = <const T extends readonly string[]>(values: T, description: string): TUnion<Literals<T>> =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  ) as unknown as TUnion<Literals<T>>;

export const IngestProtocolSchema = literals(ingestProtocols, 'How the source reaches the slicer: rtmp, srt, rist, zixi or hls (push)');
export const OutputProfileSchema = literals(outputProfiles, 'Output ladder: sd-480p, hd-720p, hd-1080p, uhd-2160p, audio-only, or passthrough (the source repackaged as it comes, no transcoding)');
export const TaskOperationSchema = literals(taskOperations, 'CREATE, UPDATE, DELETE or RESTART');
export const TaskStateSchema = literals(taskStates, 'PENDING, IN_PROGRESS, COMPLETED or FAILED');
export const SlicerStateSchema = literals(
  slicerStates,
  'provisioning, running, updating, restarting, deleting, deleted or failed; follows the slicer tasks',
);

export type IngestProtocol = Static<typeof IngestProtocolSchema>;
export type OutputProfile = Static<typeof OutputProfileSchema>;
export type TaskOperation = Static<typeof TaskOperationSchema>;
export type TaskState = Static<typeof TaskStateSchema>;
export type SlicerState = Static<typeof SlicerStateSchema>;

const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

// No control characters anywhere and at least one character that is neither blank nor control.
const NAME_PATTERN = '^[^\\x00-\\x1f\\x7f]*[^\\x00-\\x20\\x7f][^\\x00-\\x1f\\x7f]*$';

const slicerFields = {
  name: Type.String({ minLength: 1, maxLength: 100, pattern: NAME_PATTERN, description: 'Display name, 1-100 characters' }),
  description: Type.Optional(Type.String({ maxLength: 500, description: 'Free text, at most 500 characters' })),
  region: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[a-z0-9-]+$',
    description: 'Region the slicer runs in; one of the configured regions (PLAYLINE_REGIONS)',
  }),
  ingest_protocol: IngestProtocolSchema,
  output_profile: OutputProfileSchema,
  dvr_window_s: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 43200,
      description:
        'DVR: seconds of the live output players can seek back in while the event runs (0: the short live window only). ' +
        'Default and upper bound: the deployment\'s PLAYLINE_LIVE_DVR_WINDOW_S (2 h unless set). Low-latency output only',
    }),
  ),
  record: Type.Optional(
    Type.Boolean({
      description:
        'Record each live event into the asset library (default true): when the event ends (the encoder gone past the reconnect grace, or the slicer stopped or deleted) ' +
        'its segments become a ready asset with source_slicer_id, without re-encoding',
    }),
  ),
};

export const SlicerCreateBody = Type.Object(slicerFields, { additionalProperties: false });
export type SlicerCreateBody = Static<typeof SlicerCreateBody>;

/** The desired configuration of a slicer: what a CREATE or UPDATE task applies. */
export type SlicerConfig = SlicerCreateBody;

export const SlicerUpdateBody = Type.Partial(Type.Object(slicerFields), {
  additionalProperties: false,
  minProperties: 1,
  description: 'Any non-empty subset of the slicer fields; the change is applied by an UPDATE task',
});
export type SlicerUpdateBody = Static<typeof SlicerUpdateBody>;

export const SlicerParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'Slicer ID' }) });
export const TaskParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'Task ID (UUID)' }) });

const cursorQuery = Type.Optional(Type.String({ maxLength: 200, description: 'Opaque cursor of the next page (from the Link header)' }));

export const SlicerListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, 1-100 (default 50)' })),
  cursor: cursorQuery,
});
export type SlicerListQuery = Static<typeof SlicerListQuery>;

export const TaskListQuery = Type.Object(
  {
    state: Type.Optional(TaskStateSchema),
    operation: Type.Optional(TaskOperationSchema),
    slicer_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, 1-100. Without it, every task (after the cursor, if given) in one answer' }),
    ),
    cursor: cursorQuery,
  },
  { description: 'All optional: the spec gives the list no parameters, and without any it returns every task, newest first' },
);
export type TaskListQuery = Static<typeof TaskListQuery>;

export const TaskRefSchema = Type.Object(
  {
    id: Type.String({ pattern: UUID_PATTERN }),
    state: TaskStateSchema,
    operation: TaskOperationSchema,
  },
  { description: 'The task carrying out the latest requested change of the slicer' },
);

export const ManagedSlicerTaskSchema = Type.Object(
  {
    '@id': Type.String({ description: '/api/v4/managed-slicer/slicers/tasks/<id>' }),
    '@type': Type.Literal('ManagedSlicerTask'),
    id: Type.String({ pattern: UUID_PATTERN, description: 'System-defined task ID (UUID)' }),
    operation: TaskOperationSchema,
    state: TaskStateSchema,
    timestamp: Type.Integer({ description: 'Unix time in seconds at which the task was initiated' }),
    slicer_id: Type.String({ description: 'The slicer the task works on' }),
    failure_reason: Type.Optional(Type.String({ description: 'Why the task failed (FAILED only)' })),
  },
  { description: 'One create, update, restart or delete of a managed slicer' },
);
export type ManagedSlicerTaskView = Static<typeof ManagedSlicerTaskSchema>;

export const LiveStateSchema = literals(
  liveStates,
  'provisioning, waiting_for_source (listening, no source yet or the source went away), live (media arriving), reconnecting (a live source went away: the event goes on if it is back within PLAYLINE_LIVE_RECONNECT_GRACE_MS), restarting (after a crash, with backoff), failed or stopped',
);

export const LiveStatusSchema = Type.Object(
  {
    state: LiveStateSchema,
    failure_reason: Type.Optional(Type.String({ description: 'Why the slicer process last failed (failed, restarting)' })),
    input_bitrate_kbps: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Bitrate of the source as received, over the last second or so; null without a source' }),
    last_frame_at: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix milliseconds of the last media received; null before any' }),
    restarts: Type.Integer({ minimum: 0, description: 'Times the slicer process was started again (source gone, crash) since it was provisioned here' }),
    recording: Type.Optional(
      Type.Object(
        {
          state: Type.Union([Type.Literal('idle'), Type.Literal('recording'), Type.Literal('stopped'), Type.Literal('unavailable')], {
            description: 'idle: no event under way; recording; stopped: this event is no longer recorded (reason), the live goes on; unavailable: this server cannot record (reason)',
          }),
          reason: Type.Union([Type.String(), Type.Null()]),
        },
        { description: 'Recording of the live event into the library (slicers with record on)' },
      ),
    ),
  },
  { description: 'The slicer process as it runs now (real slicers only, on the instance running it); absent otherwise' },
);

export const ManagedSlicerSchema = Type.Object(
  {
    '@id': Type.String({ description: '/api/v4/managed-slicer/slicers/<id>' }),
    '@type': Type.Literal('ManagedSlicer'),
    id: Type.String({ description: 'System-defined slicer ID' }),
    name: Type.String(),
    description: Type.Optional(Type.String()),
    region: Type.String(),
    ingest_protocol: IngestProtocolSchema,
    output_profile: OutputProfileSchema,
    dvr_window_s: Type.Optional(Type.Integer({ description: 'DVR window of the live output, in seconds (0: the short live window); absent on slicers made before it existed (they take PLAYLINE_LIVE_DVR_WINDOW_S)' })),
    record: Type.Boolean({ description: 'Whether live events are recorded into the asset library (assets with source_slicer_id)' }),
    state: SlicerStateSchema,
    ingest_url: Type.Union([Type.String(), Type.Null()], {
      description:
        'Where to send the source, known once a CREATE or UPDATE task completed. It carries the slicer\'s stream key, ' +
        'which the ingest checks before it takes media: the SRT passphrase (`?passphrase=<key>&pbkeylen=16`), the RIST ' +
        'secret (`?secret=<key>&aes-type=128`), the RTMP stream name (`rtmp://host:port/live/<key>`), or the hls push ' +
        'path (`…/ingest/hls/<workspace>/<slicer id>/<key>/index.m3u8`). Shown only to the slicer\'s workspace; ' +
        '`POST …/slicers/<id>/rotate-stream-key` replaces the key',
    }),
    created_at: Type.Integer({ description: 'Unix milliseconds' }),
    updated_at: Type.Integer({ description: 'Unix milliseconds' }),
    task: TaskRefSchema,
    live: Type.Optional(LiveStatusSchema),
  },
  { description: 'A managed slicer and the task carrying out its latest change' },
);
export type ManagedSlicerView = Static<typeof ManagedSlicerSchema>;

const collection = <T extends typeof ManagedSlicerSchema | typeof ManagedSlicerTaskSchema>(item: T) =>
  Type.Object({
    '@id': Type.String({ description: 'The path that was called' }),
    '@type': Type.Literal('Collection'),
    items: Type.Array(item),
    total_items: Type.Integer({ description: 'Number of items matching the filters, over all pages (without filters: the total)' }),
  });

export const ManagedSlicerCollection = collection(ManagedSlicerSchema);
export const ManagedSlicerTaskCollection = collection(ManagedSlicerTaskSchema);
export type ManagedSlicerCollectionView = Static<typeof ManagedSlicerCollection>;
export type ManagedSlicerTaskCollectionView = Static<typeof ManagedSlicerTaskCollection>;
