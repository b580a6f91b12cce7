import { createHmac, timingSafeEqual } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** The playback URL's options that shape a session's segment list (see segment-plan.ts). */
export const SessionPlanSchema = Type.Object(
  {
    durationS: Type.Optional(Type.Integer({ minimum: 1 })),
    minSegmentS: Type.Optional(Type.Integer({ minimum: 1 })),
    targetDurationS: Type.Optional(Type.Integer({ minimum: 1 })),
    stopOffsetS: Type.Optional(Type.Integer({ minimum: 0 })),
    sliceStartS: Type.Optional(Type.Integer({ minimum: 0 })),
    sliceStopS: Type.Optional(Type.Integer({ minimum: 1 })),
    startSegment: Type.Optional(Type.Integer({ minimum: 0 })),
    hlsVersion: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
export type SessionPlan = Static<typeof SessionPlanSchema>;

const Id = Type.String({ minLength: 1, maxLength: 256 });

/**
 * What a session token grants: one workspace's playback session of one asset, until the
 * playback URL's `exp`, with the segment plan and the preroll ads decided at the playback request.
 */
export const SessionGrantSchema = Type.Object(
  {
    /** The workspace whose statistics the session counts in (the URL's `oid`). */
    owner: Id,
    /** The workspace whose library holds the content (`coid` when given, else `oid`). */
    library: Id,
    assetId: Id,
    session: Id,
    /** Unix ms of the playback request (manifest latency and startup time are measured from it). */
    requestedAt: Type.Integer({ minimum: 0 }),
    /** Unix seconds: the playback URL's `exp`. */
    expiresAt: Type.Integer({ minimum: 0 }),
    plan: SessionPlanSchema,
    /** Preroll ads: assets of `owner`'s library, in play order, and how long the ad decision took. */
    /** Set when the content is a live event (a managed slicer's live window; `assetId` names the slicer). */
    live: Type.Optional(Type.Literal(true)),
    ads: Type.Optional(Type.Object({ assetIds: Type.Array(Id, { minItems: 1, maxItems: 10 }), latencyMs: Type.Number({ minimum: 0 }) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export type SessionGrant = Static<typeof SessionGrantSchema>;

export type TokenCheck =
  | { ok: true; grant: SessionGrant }
  /** `grant` is set when the token verified but has expired (104); a forged token (110) has none it can trust. */
  | { ok: false; reason: 'expired'; grant: SessionGrant }
  | { ok: false; reason: 'forged'; claimed: { owner: string; assetId: string; session: string } | undefined };

/** Longest token accepted: far above what the grant needs, so junk is refused before any work. */
export const MAX_TOKEN_LENGTH = 4096;
const FORMAT = 'pst1';

const b64 = (data: Buffer | string) => Buffer.from(data).toString('base64url');

const decodePayload = (payload: string): unknown => {
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
};

/**
 * Session tokens: `<base64url JSON grant>.<base64url HMAC-SHA256>`, keyed by a key derived from
 * the server's secret key, so any instance of a deployment verifies a token another one issued,
 * with no storage access. The token sits in the path (`/play/s/<token>/...`), so it is all
 * URL-safe and players resolve relative URIs under it.
 */
export class SessionTokens {
  constructor(private readonly key: Buffer) {}

  sign(grant: SessionGrant): string {
    const payload = b64(JSON.stringify(grant));
    return `${payload}.${this.mac(payload)}`;
  }

  verify(token: string, nowMs: number): TokenCheck {
    const dot = token.lastIndexOf('.');
    if (token.length > MAX_TOKEN_LENGTH || dot <= 0) return { ok: false, reason: 'forged', claimed: undefined };
    const payload = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.mac(payload), 'base64url');
    const decoded = decodePayload(payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected) || !Value.Check(SessionGrantSchema, decoded)) {
      return { ok: false, reason: 'forged', claimed: claimedBy(decoded) };
    }
    if (nowMs > decoded.expiresAt * 1000) return { ok: false, reason: 'expired', grant: decoded };
    return { ok: true, grant: decoded };
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(`${FORMAT}.${payload}`).digest('base64url');
  }
}

/** Who an unverified token says it is for: only ever used to link its refusal to an existing workspace. */
function claimedBy(decoded: unknown): { owner: string; assetId: string; session: string } | undefined {
  if (decoded === null || typeof decoded !== 'object') return undefined;
  const { owner, assetId, session } = decoded as Record<string, unknown>;
  if (typeof owner !== 'string' || typeof assetId !== 'string' || typeof session !== 'string') return undefined;
  return { owner, assetId, session };
}
