import { AppError, type FieldViolation } from '../../platform/errors.js';
import { platformNames, SECRET_MASK, targetProtocols, type PlatformName, type TargetCreateBody, type TargetProtocol } from './syndication.schema.js';
import { checkStreamForm, isValidHost, isValidPort, PORT_MESSAGE, streamFormShape, type StreamForm } from './stream-forms.js';

export type ConfigKey =
  | 'clipping_profile_id'
  | 'host'
  | 'integrated'
  | 'page_id'
  | 'password'
  | 'port'
  | 're_schedule'
  | 'stream_id'
  | 'type';

/** How a platform delivers over one protocol. */
export interface DeliveryRule {
  /** The form `target_stream` must take; `none` means it is not used and must be absent. */
  stream: StreamForm;
  /** platform_config keys this delivery requires. */
  requires?: readonly ConfigKey[];
}

/** One row of the platform table (DESIGN §5). */
export interface PlatformRule {
  kind: string;
  /** The protocols the platform accepts, each with its delivery rule. */
  deliveries: Partial<Record<TargetProtocol, DeliveryRule>>;
  /** Further platform_config keys the platform accepts (besides `type` and delivery keys). */
  accepts?: readonly ConfigKey[];
  /**
   * Integrated authentication (publishing through the platform's API instead of a stream key).
   * `requires` must be present when integrated; `only` may be present only when integrated.
   */
  integration?: { requires: readonly ConfigKey[]; only: readonly ConfigKey[] };
  /** Public ingest the connection test dials when target_stream is only a key. */
  ingest?: string;
}

const streamKey: DeliveryRule = { stream: 'stream-key' };
const zixi: DeliveryRule = { stream: 'none', requires: ['host', 'port', 'password', 'stream_id'] };

/** The platform table. Adding a platform is one row (and its name in `platformNames`). */
export const platformTable: Record<PlatformName, PlatformRule> = {
  Facebook: {
    kind: 'social network',
    deliveries: { rtmp: streamKey },
    accepts: ['re_schedule'],
    integration: { requires: ['page_id'], only: ['clipping_profile_id'] },
    ingest: 'rtmps://live-api-s.facebook.com:443/rtmp/',
  },
  YouTube: {
    kind: 'video sharing',
    deliveries: { rtmp: streamKey },
    integration: { requires: [], only: ['clipping_profile_id'] },
    ingest: 'rtmp://a.rtmp.youtube.com/live2/',
  },
  TikTok: { kind: 'short video', deliveries: { rtmp: streamKey } },
  Twitch: { kind: 'game streaming', deliveries: { rtmp: streamKey }, ingest: 'rtmp://live.twitch.tv/app/' },
  'AWS Elemental MediaConnect': { kind: 'media transport', deliveries: { zixi } },
  'Pluto TV': { kind: 'FAST TV', deliveries: { zixi } },
  Custom: {
    kind: 'any',
    deliveries: {
      rtmp: { stream: 'rtmp-url' },
      rtmps: { stream: 'rtmps-url' },
      hls: { stream: 'none' },
      'hls-push': { stream: 'http-dir-url' },
      zixi,
      srt: { stream: 'srt-url' },
      rist: { stream: 'rist-url' },
    },
  },
};

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

/** Fields whose values are secrets: never shown, never quoted. */
export const secretConfigKeys = ['password', 'stream_id'] as const satisfies readonly ConfigKey[];

/** Response members a client may send back unchanged (GET, edit, PATCH); they are ignored. */
const readOnlyMembers = new Set(['@id', '@type', 'id', 'status']);
const bodyMembers = new Set(['description', 'platform', 'target_protocol', 'target_stream', 'platform_config']);

/** A clipping profile as the validator needs it; the service looks it up before validating. */
export interface ClippingProfileRef {
  integrations: readonly { service: string }[];
}
export type ClippingProfileLookup = (id: string) => ClippingProfileRef | undefined;

export const isPlatformName = (value: unknown): value is PlatformName =>
  typeof value === 'string' && (platformNames as readonly string[]).includes(value);
const isProtocol = (value: unknown): value is TargetProtocol =>
  typeof value === 'string' && (targetProtocols as readonly string[]).includes(value);
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The platform_config keys a platform accepts over a protocol. */
export function allowedConfigKeys(rule: PlatformRule, delivery: DeliveryRule | undefined): Set<ConfigKey> {
  const keys = new Set<ConfigKey>(['type', ...(rule.accepts ?? []), ...(delivery?.requires ?? [])]);
  if (rule.integration) for (const k of ['integrated', ...rule.integration.requires, ...rule.integration.only] as const) keys.add(k);
  return keys;
}

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
  if (platform === undefined) add('/platform', 'is required');
  else if (!isPlatformName(platform)) add('/platform', `must be one of: ${platformNames.join(', ')} (case-sensitive)`);
  const rule = isPlatformName(platform) ? platformTable[platform] : undefined;

  let delivery: DeliveryRule | undefined;
  if (protocol === undefined) add('/target_protocol', 'is required');
  else if (!isProtocol(protocol)) add('/target_protocol', `must be one of: ${targetProtocols.join(', ')}`);
  else if (rule) {
    delivery = rule.deliveries[protocol];
    if (!delivery) add('/target_protocol', `must be ${Object.keys(rule.deliveries).join(' or ')} for ${String(platform)}`);
  }

  const config = target.platform_config ?? {};
  if (!isObject(config)) add('/platform_config', 'must be an object');
  const cfg = isObject(config) ? config : {};
  const integrated = cfg.integrated === true;

  if (rule && delivery) checkStream(target.target_stream, delivery.stream, integrated && rule.integration !== undefined, add);
  else if (target.target_stream !== undefined && typeof target.target_stream !== 'string') add('/target_stream', 'must be a string');

  // With a protocol the platform does not take, judge keys against all its deliveries so the
  // one real mistake is not buried under follow-on violations.
  const allowed = !rule
    ? undefined
    : delivery
      ? allowedConfigKeys(rule, delivery)
      : new Set(Object.values(rule.deliveries).flatMap((d) => [...allowedConfigKeys(rule, d)]));
  for (const [key, value] of Object.entries(cfg)) {
    const path = `/platform_config/${escapeKey(key)}`;
    const kind = configKinds[key as ConfigKey] as ValueKind | undefined;
    if (kind === undefined) add(path, 'is not a platform_config key');
    else if (allowed && !allowed.has(key as ConfigKey)) {
      add(path, `does not belong to ${String(platform)}${delivery ? ` over ${String(protocol)}` : ''}`);
    } else checkValue(kind, value, path, add);
  }
  if (!rule || !allowed) return out;

  const required = [...(delivery?.requires ?? []), ...(integrated && rule.integration ? rule.integration.requires : [])];
  for (const key of required) {
    if (cfg[key] === undefined) add(`/platform_config/${key}`, integrated && !delivery?.requires?.includes(key) ? 'is required when integrated' : 'is required');
  }
  for (const key of rule.integration?.only ?? []) {
    if (cfg[key] !== undefined && !integrated) add(`/platform_config/${key}`, 'is allowed only when integrated is true');
  }
  const profileId = cfg.clipping_profile_id;
  if (integrated && typeof profileId === 'string' && allowed.has('clipping_profile_id') && profileId.length > 0) {
    const profile = lookupProfile(profileId);
    if (!profile) add('/platform_config/clipping_profile_id', 'names no clipping profile of this workspace');
    else if (!profile.integrations.some((i) => i.service === platform)) {
      add('/platform_config/clipping_profile_id', `names a clipping profile without a ${String(platform)} integration`);
    }
  }
  return out;
}

function checkStream(value: unknown, form: StreamForm, integrated: boolean, add: (p: string, m: string) => void): void {
  if (form === 'none') {
    if (value !== undefined) add('/target_stream', 'is not used with this platform and protocol; remove it');
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

/** Validates, then keeps only the fields of a target (read-only members dropped). */
export function parseTarget(input: Readonly<Record<string, unknown>>, lookupProfile: ClippingProfileLookup): TargetParse {
  const violations = validateTarget(input, lookupProfile);
  if (violations.length > 0) return { ok: false, violations };
  const target: Record<string, unknown> = {};
  for (const key of bodyMembers) if (input[key] !== undefined) target[key] = input[key];
  return { ok: true, target: target as TargetCreateBody };
}

/** The 400 for a target that breaks rules; names every path, quotes no value. */
export function targetValidationError(violations: FieldViolation[]): AppError {
  const paths = [...new Set(violations.map((v) => v.path))].join(', ');
  return new AppError('validation_failed', `The publishing target breaks ${violations.length} rule(s) at: ${paths}`, {
    errors: violations,
  });
}
