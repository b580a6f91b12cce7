import { Type, type Static, type TSchema } from '@sinclair/typebox';

/**
 * Request and response schemas of publishing (syndication) targets, schedules, regions and
 * clipping profiles. Request schemas check types only: every rule that depends on the platform
 * or on another field lives in `validateTarget` (platform-rules.ts), which reports all
 * violations at once with their JSON paths. Request objects therefore do not forbid extra
 * keys here; the validator names them (AJV would otherwise drop them silently).
 */

export const platformNames = [
  'Facebook',
  'YouTube',
  'TikTok',
  'Twitch',
  'AWS Elemental MediaConnect',
  'Pluto TV',
  'Custom',
] as const;
export type PlatformName = (typeof platformNames)[number];

export const targetProtocols = ['rtmp', 'rtmps', 'hls', 'hls-push', 'zixi', 'srt', 'rist'] as const;
export type TargetProtocol = (typeof targetProtocols)[number];

/** What every secret is replaced with in responses, logs and error messages. */
export const SECRET_MASK = '********';


export const PlatformSchema = Type.Unsafe<PlatformName>({
  type: 'string',
  description: 'Case-sensitive platform name',
  examples: [...platformNames],
});
export const ProtocolSchema = Type.Unsafe<TargetProtocol>({
  type: 'string',
  description: 'One of rtmp, rtmps, hls, hls-push, zixi, srt, rist (validated per platform)',
  examples: [...targetProtocols],
});
export const StatusSchema = Type.Union([Type.Literal('active'), Type.Literal('stopped'), Type.Literal('error')], {
  description: 'active, stopped or error',
});
export type TargetStatus = Static<typeof StatusSchema>;

const id32 = Type.String({ minLength: 1, maxLength: 64, description: 'System-defined ID' });
const text = (maxLength: number, description: string) => Type.String({ maxLength, description });

/** platform_config as a client sends it; `null` only has a meaning in PATCH (remove the key). */
const platformConfigProperties = {
  clipping_profile_id: Type.Optional(text(64, 'Clipping profile whose credentials authenticate (integrated only)')),
  host: Type.Optional(text(253, 'Hostname or IP address (zixi)')),
  integrated: Type.Optional(Type.Boolean({ description: 'Facebook and YouTube only; default false' })),
  page_id: Type.Optional(text(128, 'Facebook page ID, required when integrated')),
  password: Type.Optional(text(512, 'Stream password (zixi); returned masked')),
  port: Type.Optional(Type.Integer({ description: 'Port of the platform or device (zixi), 1-65535' })),
  re_schedule: Type.Optional(Type.Boolean({ description: 'Facebook only; default false' })),
  stream_id: Type.Optional(text(512, 'Stream ID (zixi); returned masked')),
  type: Type.Optional(text(16, 'push')),
  remote_id: Type.Optional(text(256, 'Reserved for future use; accepted (responses show it) and ignored')),
};

export const PlatformConfigInput = Type.Object(platformConfigProperties, {
  description: 'Platform-specific settings; a key that does not belong to the platform is rejected',
});
export type PlatformConfigInput = Static<typeof PlatformConfigInput>;

/**
 * `T | null` as a JSON Schema type list (`["string", "null"]`), not `anyOf`: under Fastify's
 * type coercion an `anyOf` would turn `null` into `""` or `0` before the null branch is tried.
 */
const nullable = <T extends TSchema & { type: string }>(schema: T) =>
  Type.Optional(Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] }));

export const PlatformConfigPatch = Type.Object(
  {
    clipping_profile_id: nullable(text(64, 'Clipping profile ID; null removes it')),
    host: nullable(text(253, 'Hostname or IP address; null removes it')),
    integrated: nullable(Type.Boolean()),
    page_id: nullable(text(128, 'Facebook page ID; null removes it')),
    password: nullable(text(512, `Stream password; "${SECRET_MASK}" keeps the stored one`)),
    port: nullable(Type.Integer()),
    re_schedule: nullable(Type.Boolean()),
    stream_id: nullable(text(512, `Stream ID; "${SECRET_MASK}" keeps the stored one`)),
    type: nullable(text(16, 'push')),
    remote_id: nullable(text(256, 'Reserved for future use; ignored')),
  },
  { description: 'Merged key by key into the stored platform_config; null removes a key' },
);
export type PlatformConfigPatch = Static<typeof PlatformConfigPatch>;

export const TargetCreateBody = Type.Object({
  description: Type.Optional(text(1024, 'Description of the target')),
  platform: PlatformSchema,
  target_protocol: ProtocolSchema,
  target_stream: Type.Optional(text(2048, 'Stream key or stream URL, depending on the platform and protocol')),
  platform_config: Type.Optional(PlatformConfigInput),
});
export type TargetCreateBody = Static<typeof TargetCreateBody>;

export const TargetPatchBody = Type.Object({
  description: nullable(text(1024, 'Description; null clears it')),
  platform: PlatformSchema,
  target_protocol: ProtocolSchema,
  target_stream: nullable(text(2048, `Stream key or URL; null removes it; "${SECRET_MASK}" keeps the stored one`)),
  platform_config: Type.Optional(PlatformConfigPatch),
});
export type TargetPatchBody = Static<typeof TargetPatchBody>;

const shown = (description: string) => ({ description });

export const PlatformConfigView = Type.Object(
  {
    clipping_profile_id: Type.Optional(Type.String(shown('Facebook and YouTube: the clipping profile of integrated publishing; "" when not set'))),
    host: Type.Optional(Type.String(shown('zixi kinds (AWS Elemental MediaConnect, Pluto TV, Custom zixi): hostname or IP address'))),
    integrated: Type.Optional(Type.Boolean(shown('Facebook and YouTube: integrated authentication; false unless set'))),
    page_id: Type.Optional(Type.String(shown('Facebook: page ID of integrated publishing; "" when not set'))),
    password: Type.Optional(Type.String(shown(`zixi kinds: always "${SECRET_MASK}"`))),
    port: Type.Optional(Type.Integer(shown('zixi kinds: port of the platform or device'))),
    re_schedule: Type.Optional(Type.Boolean(shown('Facebook: start a new live event when the time limit is reached; false unless set'))),
    remote_id: Type.String(shown('Reserved for future use; always ""')),
    stream_id: Type.Optional(Type.String(shown(`zixi kinds: always "${SECRET_MASK}"`))),
    type: Type.String(shown('Always "push"')),
  },
  { description: "Every key of the target's kind (platform and protocol), with its default when not set; keys of other kinds are absent" },
);

export const SyndicationTarget = Type.Object({
  '@id': Type.String({ description: 'Path that returns this target' }),
  '@type': Type.Literal('SyndicationTarget'),
  id: id32,
  description: Type.String({ description: 'Description of the target; "" when not set' }),
  platform: PlatformSchema,
  target_protocol: ProtocolSchema,
  target_stream: Type.String({
    description:
      `"${SECRET_MASK}" when a stream key or URL is stored; for a Custom hls (pull) target, the generated pull URL once a ` +
      'schedule on it has started; "" otherwise (the kind uses none, or none is set)',
  }),
  status: StatusSchema,
  platform_config: PlatformConfigView,
});
export type SyndicationTarget = Static<typeof SyndicationTarget>;

export const TargetDeleted = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('SyndicationTarget'),
  message: Type.Literal('Deleted'),
});

export const TargetIdParams = Type.Object({ id: id32 });

export const TargetTestBody = Type.Object({
  test: Type.Literal('rtmp-connection', { description: 'The only test: connect to the target' }),
});

export const TargetTestResult = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('SyndicationTargetTest'),
  test: Type.Literal('rtmp-connection'),
  outcome: Type.Union([Type.Literal('passed'), Type.Literal('failed'), Type.Literal('not_supported')], { description: 'What the test found' }),
  reason: Type.Optional(Type.String({ description: 'Why it failed: refused, timeout, bad_handshake, tls_error, ...' })),
  detail: Type.String(),
  endpoint: Type.Optional(Type.String({ description: 'host:port that was tried (never the stream key)' })),
});

// ---- schedules (DESIGN §5) ----

export const ContentType = Type.Union([Type.Literal('e'), Type.Literal('c')], { description: 'e: live event, c: live channel' });

export const ScheduleCreateBody = Type.Object(
  {
    syndication_target_id: id32,
    content_id: Type.String({ minLength: 1, maxLength: 64 }),
    content_type: ContentType,
    region: Type.String({ minLength: 1, maxLength: 64, description: 'One of GET /syndication-regions' }),
    scte35_enabled: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)], { default: 0 })),
    source_url_params: Type.Optional(Type.String({ maxLength: 2048, description: 'Query parameters added to the source URL' })),
  },
  { additionalProperties: false },
);
export type ScheduleCreateBody = Static<typeof ScheduleCreateBody>;

export const SchedulePatchBody = Type.Partial(ScheduleCreateBody, { additionalProperties: false });
export type SchedulePatchBody = Static<typeof SchedulePatchBody>;

export const SyndicationSchedule = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('SyndicationSchedule'),
  id: id32,
  syndication_target_id: id32,
  content_id: Type.String(),
  content_type: ContentType,
  region: Type.String(),
  scte35_enabled: Type.Union([Type.Literal(0), Type.Literal(1)]),
  source_url_params: Type.String(),
  status: StatusSchema,
  error: Type.Optional(Type.String({ description: 'Why publishing failed, while status is error' })),
});
export type SyndicationSchedule = Static<typeof SyndicationSchedule>;

export const ScheduleDeleted = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('SyndicationSchedule'),
  message: Type.Literal('Deleted'),
});

export const ScheduleListQuery = Type.Object({
  syndication_target_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only the schedules of this target' })),
});

export const ScheduleActionBody = Type.Object(
  { mode: Type.Union([Type.Literal('start'), Type.Literal('stop')], { description: 'start or stop publishing' }) },
  { additionalProperties: false },
);
export type ScheduleActionBody = Static<typeof ScheduleActionBody>;

// ---- regions and clipping profiles ----

export const SyndicationRegion = Type.Object({
  '@type': Type.Literal('SyndicationRegion'),
  id: Type.String(),
  name: Type.String(),
});

export const ClippingIntegration = Type.Object(
  {
    service: Type.String({ description: 'Platform this profile can publish to (Facebook or YouTube)' }),
    account: Type.String({ minLength: 1, maxLength: 256, description: 'Account or page name shown to users' }),
  },
  { additionalProperties: false },
);

export const ClippingProfileCreateBody = Type.Object(
  {
    description: Type.String({ minLength: 1, maxLength: 1024 }),
    integrations: Type.Array(ClippingIntegration, { minItems: 1, maxItems: 16 }),
  },
  { additionalProperties: false },
);
export type ClippingProfileCreateBody = Static<typeof ClippingProfileCreateBody>;

export const ClippingProfile = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('ClippingProfile'),
  id: id32,
  description: Type.String(),
  integrations: Type.Array(ClippingIntegration),
});
export type ClippingProfile = Static<typeof ClippingProfile>;

export const ClippingProfileIdParams = Type.Object({ id: id32 });

export const ClippingProfileQuery = Type.Object({
  service: Type.Optional(Type.String({ description: 'Only profiles compatible with this platform' })),
});

export const collectionOf = <T extends TSchema>(item: T, description: string) =>
  Type.Object(
    {
      '@id': Type.String(),
      '@type': Type.Literal('Collection'),
      items: Type.Array(item),
      total_items: Type.Integer({ description: 'Number of items returned' }),
    },
    { description },
  );
