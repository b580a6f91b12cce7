import { Type, type Static } from '@sinclair/typebox';
import { collectionOf } from '../workspaces/workspaces.schema.js';
import { MAX_ID_LENGTH } from '../../platform/limits.js';

const Name = (what: string) => Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$', description: `${what} name: 1-64 of A-Z a-z 0-9 _ . -` });
const Times = {
  created_at: Type.Integer({ description: 'Unix milliseconds' }),
  updated_at: Type.Integer({ description: 'Unix milliseconds' }),
};

// Application keys

export const AppKeyVersionSchema = Type.Object({
  version: Type.Integer({ minimum: 1 }),
  prefix: Type.String({ description: 'First characters of the secret' }),
  created_at: Type.Integer({ description: 'Unix milliseconds' }),
  revoked_at: Type.Union([Type.Integer(), Type.Null()]),
});

export const AppKeySchema = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('PlaybackAppKey'),
  name: Type.String({ description: 'The `kid` of playback URLs signed with this key' }),
  owner: Type.String(),
  versions: Type.Array(AppKeyVersionSchema, { description: 'Oldest first; `kv` picks one, else any active version may sign' }),
  created_version: Type.Optional(Type.Integer({ description: 'The version just created' })),
  secret: Type.Optional(Type.String({ description: 'The secret of the version just created: shown once' })),
});

export const CreateAppKeyBody = Type.Object({ name: Name('Application key') }, { additionalProperties: false });
export const AppKeyParams = Type.Object({ name: Name('Application key') });
export const AppKeyVersionParams = Type.Object({ name: Name('Application key'), version: Type.Integer({ minimum: 1 }) });

// Ad configurations

export const AdConfigSchema = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('PlaybackAdConfig'),
  name: Type.String({ description: 'The `ad` parameter of playback URLs using it' }),
  ad_server_url: Type.Union([Type.String(), Type.Null()], { description: 'Ad decision server (simulated: never called)' }),
  ad_asset_ids: Type.Array(Type.String(), { description: 'Ad assets of your library, stitched before the content in this order (each must be packaged, else playback answers 122)' }),
  simulated_latency_ms: Type.Integer({ description: 'How long the simulated ad decision server takes' }),
  timeout_ms: Type.Integer({ description: 'How long playback waits for the ad decision (130 beyond)' }),
  ready: Type.Boolean({ description: 'False while not set up (no ad_server_url or no ad assets): playback with it answers 122' }),
  problems: Type.Array(Type.String()),
  ...Times,
});

export const PutAdConfigBody = Type.Object(
  {
    ad_server_url: Type.Optional(Type.Union([Type.String({ maxLength: 2048, pattern: '^https?://' }), Type.Null()])),
    ad_asset_ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }), { maxItems: 10 })),
    simulated_latency_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 30_000 })),
  },
  { additionalProperties: false },
);
export const AdConfigParams = Type.Object({ name: Name('Ad configuration') });

// DRM policies

export const DrmProviderSchema = Type.Union([Type.Literal('widevine'), Type.Literal('playready'), Type.Literal('fairplay')]);

export const DrmPolicySchema = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('PlaybackDrmPolicy'),
  name: Type.String({ description: 'The `drm` parameter of playback URLs using it' }),
  provider: DrmProviderSchema,
  settings: Type.Object({}, { additionalProperties: true, description: 'Provider settings: security_level, hdcp, license_duration_s, persistent' }),
  provider_accepts: Type.Boolean({ description: 'False: the provider rejects these settings and playback answers 114' }),
  provider_problems: Type.Array(Type.String()),
  ...Times,
});

export const PutDrmPolicyBody = Type.Object(
  {
    provider: DrmProviderSchema,
    settings: Type.Optional(Type.Object({}, { additionalProperties: true, maxProperties: 32 })),
  },
  { additionalProperties: false },
);
export const DrmPolicyParams = Type.Object({ name: Name('DRM policy') });

// Private assets

export const PrivateAssetSchema = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('PlaybackPrivateAsset'),
  asset_id: Type.String(),
  shared_with: Type.Array(Type.String(), { description: 'The only workspaces that may play it with `coid=<your workspace>`, whatever your workspace-level shares (others get 102)' }),
  ...Times,
});

export const PutPrivateAssetBody = Type.Object(
  { shared_with: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 1000 })) },
  { additionalProperties: false },
);
export const PrivateAssetParams = Type.Object({ asset_id: Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }) });

// Workspace-level shares (content is private to its workspace unless shared)

export const WorkspaceIdSchema = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: 'A workspace id: 1-64 of A-Z a-z 0-9 _ -' });

export const ContentShareSchema = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('ContentShare'),
  workspace_id: Type.String({ description: 'Your workspace: the owner of the content' }),
  grantee_id: Type.String({ description: 'The workspace that may play your assets and live events with its own signed URLs and `coid=<your workspace>`' }),
  created_at: Type.Integer({ description: 'Unix milliseconds' }),
});
export const ContentShareParams = Type.Object({ grantee_id: WorkspaceIdSchema });

export const DeletedSchema = Type.Object({ '@id': Type.String(), '@type': Type.String(), message: Type.Literal('Deleted') });

export const AppKeyCollection = collectionOf(AppKeySchema);
export const AdConfigCollection = collectionOf(AdConfigSchema);
export const DrmPolicyCollection = collectionOf(DrmPolicySchema);
export const PrivateAssetCollection = collectionOf(PrivateAssetSchema);
export const ContentShareCollection = collectionOf(ContentShareSchema);

// The playback route

export const PlayParams = Type.Object({ file: Type.String({ description: '<content id>.m3u8: the asset id in the workspace\'s library (a packaged asset)' }) });

const param = (description: string) => Type.Optional(Type.String({ description }));
/** Documents the playback parameters; the edge checks them itself (each problem has its playback error code). */
export const PlayQuery = Type.Object(
  {
    tc: param('Token version: 1 (missing: 103, other: 113)'),
    exp: param('Unix seconds after which the URL is refused (missing: 103, malformed: 101, past: 104)'),
    rn: param('Random nonce (missing: 103)'),
    ct: param('Content type: a for assets (else 105), e for events (else 106)'),
    cid: param('Content id; must equal the id in the path (else 107)'),
    oid: param('Owner: the workspace id (missing: 103)'),
    kid: param('Application key name that signed the URL (unknown: 119)'),
    kv: param('Application key version (unknown or revoked: 120)'),
    extsid: param('External session id (a bad signature with it is 109)'),
    ip: param('Client IP the URL is bound to (other: 111)'),
    coid: param('Content owner, to play another workspace\'s asset or live event: it plays only if that workspace shares its content with yours (its PUT /api/v4/workspace/shares/<your id>), or, for an asset with a private-asset entry, only if the entry lists yours (else 102)'),
    pbs: param('Playback session id, single use (malformed: 128, reused: 127)'),
    dur: param('Longest playback: seconds or h:mm:ss (else 100)'),
    ts: param('Live event timeline start, Unix seconds (else 115)'),
    delay: param('Seconds behind the live edge (else 116)'),
    minDur: param('A final segment with less than this many seconds inside the slice is dropped (else 117)'),
    targetDur: param('EXT-X-TARGETDURATION at least this, 1-30 s (else 118)'),
    stopOffset: param('Seconds cut from the end (else 123)'),
    sliceStart: param('Start of the part to play, seconds (else 124)'),
    sliceStop: param('End of the part to play, seconds (else 125)'),
    startseg: param('First segment index (else 126)'),
    hlsver: param('HLS version 3-7 (else 129); fMP4 playlists use at least 6'),
    ad: param('Ad configuration name (unknown: 121, not set up: 122, ad decision timeout: 130)'),
    drm: param('DRM policy name (rejected by the provider: 114); the URL is then single use (reuse: 112)'),
    sig: param('Lowercase hex HMAC-SHA256 of the query before &sig=, appended last (missing: 108, empty: 103, mismatch: 110)'),
    CMCD: param('Common Media Client Data (CTA-5004) a player appends, even after sig: never part of the signed text; its sid names the session without pbs'),
  },
  { additionalProperties: true },
);

export type AppKeyView = Static<typeof AppKeySchema>;
export type AdConfigView = Static<typeof AdConfigSchema>;
export type DrmPolicyView = Static<typeof DrmPolicySchema>;
export type PrivateAssetView = Static<typeof PrivateAssetSchema>;
export type ContentShareView = Static<typeof ContentShareSchema>;
export type PutAdConfigInput = Static<typeof PutAdConfigBody>;
export type PutDrmPolicyInput = Static<typeof PutDrmPolicyBody>;
export type DeletedView = Static<typeof DeletedSchema>;
