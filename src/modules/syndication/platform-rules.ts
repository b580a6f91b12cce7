import { AppError, type FieldViolation } from '../../platform/errors.js';
import { isProtocol, kindRules, type ConfigKey } from './platform-table.js';
import { platformNames, SECRET_MASK, targetProtocols, type TargetCreateBody } from './syndication.schema.js';
import { checkStreamForm, isValidHost, isValidPort, PORT_MESSAGE, streamFormShape, type StreamForm } from './stream-forms.js';

type ValueKind = 'text' | 'boolean' | 'port' | 'host' | 'push';
const configKinds: Record<ConfigKey, ValueKind> = {
  clipping_profile_id: 'text',
  host: 'host',
  integrated: 'boolean',
  page_id: 'text',
  password: 'text',
  port: 'port',
  re_schedule: 'boolean',
  stream_id: 'text',
  type: 'push',
};

/** Response members a client may send back unchanged (GET, edit, PATCH); they are ignored. */
const readOnlyMembers = new Set(['@id', '@type', 'id', 'status']);
const bodyMembers = new Set(['description', 'platform', 'target_protocol', 'target_stream', 'platform_config']);
/** platform_config's reserved key: every response shows it, so a request may send it back; it is ignored. */
const RESERVED_CONFIG_KEY = 'remote_id';

/**
 * Values that mean "not set". A response shows `""` for a target_stream the target does not
 * use and for an optional text key it does not set (DESIGN §5: every field in every
 * response), so sending a response back (GET, edit, PATCH) must mean the same thing.
 */
const isUnsetStream = (value: unknown): boolean => value === undefined || value === '';
const isUnsetConfig = (key: string, value: unknown): boolean =>
  value === undefined || key === RESERVED_CONFIG_KEY || (value === '' && (key === 'page_id' || key === 'clipping_profile_id'));

/** A clipping profile as the validator needs it; the service looks it up before validating. */
export interface ClippingProfileRef {
  integrations: readonly { service: string }[];
}
export type ClippingProfileLookup = (id: string) => ClippingProfileRef | undefined;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The one validator of a publishing target: returns every violation with its JSON path, all
 * at once (empty when the target is valid). Accepts any parsed JSON object, so it also checks
 * the result of a PATCH merge. Messages never quote values (they may be secrets).
 */
export function validateTarget(target: Readonly<Record<string, unknown>>, lookupProfile: ClippingProfileLookup): FieldViolation[] {
  const out: FieldViolation[] = [];
  const add = (path: string, message: string) => out.push({ path, message });

  for (const key of Object.keys(target)) {
    if (!bodyMembers.has(key) && !readOnlyMembers.has(key)) add(`/${escapeKey(key)}`, 'is not a field of a publishing target');
  }
  if (target.description !== undefined && typeof target.description !== 'string') add('/description', 'must be a string');

  const { platform, target_protocol: protocol } = target;
  const kind = kindRules(platform, protocol);
  if (platform === undefined) add('/platform', 'is required');
  else if (!kind) add('/platform', `must be one of: ${platformNames.join(', ')} (case-sensitive)`);

  if (protocol === undefined) add('/target_protocol', 'is required');
  else if (!isProtocol(protocol)) {
    add('/target_protocol', `must be one of: ${targetProtocols.join(', ')}`);
  } else if (kind && !kind.delivery) {
    add('/target_protocol', `must be ${Object.keys(kind.rule.deliveries).join(' or ')} for ${kind.platform}`);
  }

  const config = target.platform_config ?? {};
  if (!isObject(config)) add('/platform_config', 'must be an object');
  if (isObject(config) && config[RESERVED_CONFIG_KEY] !== undefined && typeof config[RESERVED_CONFIG_KEY] !== 'string') {
    add(`/platform_config/${RESERVED_CONFIG_KEY}`, 'must be a string (reserved for future use; ignored)');
  }
  const cfg = isObject(config) ? Object.fromEntries(Object.entries(config).filter(([key, value]) => !isUnsetConfig(key, value))) : {};
  const integrated = cfg.integrated === true && kind?.rule.integration !== undefined;

  const stream = isUnsetStream(target.target_stream) ? undefined : target.target_stream;
  const over = kind?.delivery ? ` over ${String(protocol)}` : '';
  if (kind?.stream) checkStream(stream, kind.stream, integrated, `${kind.platform}${over}`, add);
  else if (stream !== undefined && typeof stream !== 'string') add('/target_stream', 'must be a string');

  for (const [key, value] of Object.entries(cfg)) {
    const path = `/platform_config/${escapeKey(key)}`;
    const valueKind = configKinds[key as ConfigKey] as ValueKind | undefined;
    if (valueKind === undefined) add(path, 'is not a platform_config key');
    else if (kind && !kind.allowed.has(key as ConfigKey)) add(path, `does not belong to ${kind.platform}${over}`);
    else checkValue(valueKind, value, path, add);
  }
  if (!kind) return out;

  const { rule } = kind;
  const required = [...kind.requires, ...(integrated && rule.integration ? rule.integration.requires : [])];
  for (const key of new Set(required)) {
    if (cfg[key] === undefined) add(`/platform_config/${key}`, kind.requires.includes(key) ? 'is required' : 'is required when integrated');
  }
  for (const key of rule.integration?.only ?? []) {
    if (cfg[key] !== undefined && !integrated) add(`/platform_config/${key}`, 'is allowed only when integrated is true');
  }
  const profileId = cfg.clipping_profile_id;
  if (integrated && typeof profileId === 'string' && kind.allowed.has('clipping_profile_id') && profileId.length > 0) {
    const profile = lookupProfile(profileId);
    if (!profile) add('/platform_config/clipping_profile_id', 'names no clipping profile of this workspace');
    else if (!profile.integrations.some((i) => i.service === kind.platform)) {
      add('/platform_config/clipping_profile_id', `names a clipping profile without a ${kind.platform} integration`);
    }
  }
  return out;
}

function checkStream(value: unknown, form: StreamForm, integrated: boolean, kindName: string, add: (p: string, m: string) => void): void {
  if (form === 'none') {
    if (value !== undefined) add('/target_stream', `is not used by ${kindName}; remove it`);
    return;
  }
  if (value === undefined) {
    if (!integrated) add('/target_stream', `is required (${streamFormShape[form]})`);
    return;
  }
  if (typeof value !== 'string') return add('/target_stream', 'must be a string');
  if (value === SECRET_MASK) return add('/target_stream', 'is the masked placeholder, not a value');
  for (const problem of checkStreamForm(form, value)) add('/target_stream', problem);
}

function checkValue(kind: ValueKind, value: unknown, path: string, add: (p: string, m: string) => void): void {
  switch (kind) {
    case 'boolean':
      if (typeof value !== 'boolean') add(path, 'must be true or false');
      return;
    case 'port':
      if (!isValidPort(value)) add(path, PORT_MESSAGE);
      return;
    case 'push':
      if (value !== 'push') add(path, 'must be "push"');
      return;
    case 'host':
      if (typeof value !== 'string' || !isValidHost(value)) add(path, 'must be a hostname or an IP address');
      return;
    case 'text':
      if (typeof value !== 'string' || value.trim().length === 0) add(path, 'must be a non-empty string');
      else if (value === SECRET_MASK) add(path, 'is the masked placeholder, not a value');
  }
}

/** JSON Pointer escaping (RFC 6901) of one key, so odd keys still yield a usable path. */
const escapeKey = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

export type TargetParse = { ok: true; target: TargetCreateBody } | { ok: false; violations: FieldViolation[] };

/** Validates, then keeps only the fields of a target that are set (read-only members, unset values and remote_id dropped). */
export function parseTarget(input: Readonly<Record<string, unknown>>, lookupProfile: ClippingProfileLookup): TargetParse {
  const violations = validateTarget(input, lookupProfile);
  if (violations.length > 0) return { ok: false, violations };
  const target: Record<string, unknown> = {};
  for (const key of bodyMembers) if (input[key] !== undefined) target[key] = input[key];
  if (isUnsetStream(target.target_stream)) delete target.target_stream;
  if (isObject(target.platform_config)) {
    target.platform_config = Object.fromEntries(Object.entries(target.platform_config).filter(([key, value]) => !isUnsetConfig(key, value)));
  }
  return { ok: true, target: target as TargetCreateBody };
}

/** The 400 for a target that breaks rules; names every path, quotes no value. */
export function targetValidationError(violations: FieldViolation[]): AppError {
  const paths = [...new Set(violations.map((v) => v.path))].join(', ');
  return new AppError('validation_failed', `The publishing target breaks ${violations.length} rule(s) at: ${paths}`, {
    errors: violations,
  });
}
