import type { FieldViolation } from '../../platform/errors.js';
import { parseTarget, type ClippingProfileLookup, type TargetParse } from './platform-rules.js';
import { kindRules, type ConfigKey } from './platform-table.js';
import { SECRET_MASK, type PlatformConfigInput, type TargetCreateBody } from './syndication.schema.js';

/**
 * PATCH of a publishing target (DESIGN §5). `platform` and `target_protocol` are required, so
 * every PATCH states the target's kind:
 * - same kind: the fields given replace the stored ones (`null` removes `description` or
 *   `target_stream`) and `platform_config` is merged key by key, `null` removing a key;
 * - another kind: the same, over what of the stored target belongs to the new kind
 *   (`fieldsOfKind`); the rest is dropped, not reported.
 * A secret sent back as the mask (`"********"`, what GET shows) keeps the stored secret, so
 * GET → edit → PATCH works. The result is validated as a whole; since stored fields that do
 * not belong are gone first, only fields the request carries can be named as not belonging.
 */
export function patchTarget(
  current: TargetCreateBody,
  patch: Readonly<Record<string, unknown>>,
  lookupProfile: ClippingProfileLookup,
): TargetParse {
  const missing: FieldViolation[] = [];
  for (const field of ['platform', 'target_protocol'] as const) {
    if (patch[field] === undefined || patch[field] === null) missing.push({ path: `/${field}`, message: 'is required in a PATCH' });
  }
  const platform = patch.platform ?? current.platform;
  const protocol = patch.target_protocol ?? current.target_protocol;
  const sameKind = platform === current.platform && protocol === current.target_protocol;
  const base = sameKind ? current : fieldsOfKind(current, platform, protocol, lookupProfile);
  const result = parseTarget(mergeTargetPatch(base, patch), lookupProfile);
  if (missing.length === 0) return result;
  // Report the missing fields together with whatever else the merged result breaks.
  const others = result.ok ? [] : result.violations.filter((v) => !missing.some((m) => m.path === v.path));
  return { ok: false, violations: [...missing, ...others] };
}

/**
 * What of a stored target carries over to another kind: its description, `target_stream` when
 * the new kind takes a stream of the same form (a stream key stays a stream key, a Custom rtmp
 * URL is no Twitch key), the platform_config keys the new kind accepts, and a clipping profile
 * only if it can publish to the new platform. For an unknown platform nothing is judged (the
 * PATCH fails on `/platform` anyway) and the target is returned as it is.
 */
export function fieldsOfKind(
  current: TargetCreateBody,
  platform: unknown,
  protocol: unknown,
  lookupProfile: ClippingProfileLookup,
): TargetCreateBody {
  const next = kindRules(platform, protocol);
  if (!next) return current;
  const previous = kindRules(current.platform, current.target_protocol);
  const kept: TargetCreateBody = { ...current, platform_config: {} };
  delete kept.target_stream;
  if (current.target_stream !== undefined && next.stream !== undefined && next.stream === previous?.stream) {
    kept.target_stream = current.target_stream;
  }
  const config: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(current.platform_config ?? {})) {
    if (!next.allowed.has(key as ConfigKey)) continue;
    if (key === 'clipping_profile_id') {
      const profile = typeof value === 'string' ? lookupProfile(value) : undefined;
      if (!profile?.integrations.some((i) => i.service === next.platform)) continue;
    }
    config[key] = value;
  }
  kept.platform_config = config as PlatformConfigInput;
  return kept;
}

/** The merge alone (no validation). Unknown members are carried over so the validator names them. */
export function mergeTargetPatch(current: TargetCreateBody, patch: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined || key === 'platform_config') continue;
    if (key === 'target_stream' && value === SECRET_MASK && current.target_stream !== undefined) continue;
    if (value === null && (key === 'description' || key === 'target_stream')) delete merged[key];
    else if (value !== null) merged[key] = value;
  }
  if (patch.platform_config !== undefined) merged.platform_config = mergeConfig(current.platform_config ?? {}, patch.platform_config);
  return merged;
}

function mergeConfig(current: Readonly<Record<string, unknown>>, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const config: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete config[key];
    else if (value === SECRET_MASK && (key === 'password' || key === 'stream_id') && key in current) continue;
    else config[key] = value;
  }
  return config;
}
