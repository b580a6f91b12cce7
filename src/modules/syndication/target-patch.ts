import type { FieldViolation } from '../../platform/errors.js';
import { parseTarget, type ClippingProfileLookup, type TargetParse } from './platform-rules.js';
import { SECRET_MASK, type TargetCreateBody } from './syndication.schema.js';

/**
 * PATCH of a publishing target (DESIGN §5): `platform` and `target_protocol` are required;
 * the fields given replace the stored ones (`null` removes `description` or `target_stream`);
 * `platform_config` is merged key by key, `null` removing a key; a secret sent back as the
 * mask (`"********"`, what GET shows) keeps the stored secret, so GET → edit → PATCH works.
 * The merged result is validated as a whole, so switching platform with keys of the old one
 * left over names each of them.
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
  const merged = mergeTargetPatch(current, patch);
  const result = parseTarget(merged, lookupProfile);
  if (missing.length === 0) return result;
  // Report the missing fields together with whatever else the merged result breaks.
  const others = result.ok ? [] : result.violations.filter((v) => !missing.some((m) => m.path === v.path));
  return { ok: false, violations: [...missing, ...others] };
}

/** The merge alone (no validation). Unknown members are carried over so the validator names them. */
export function mergeTargetPatch(current: TargetCreateBody, patch: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined || key === 'platform_config') continue;
    if (key === 'target_stream' && value === SECRET_MASK) continue;
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
