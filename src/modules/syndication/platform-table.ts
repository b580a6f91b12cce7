import { platformNames, targetProtocols, type PlatformName, type TargetProtocol } from './syndication.schema.js';
import type { StreamForm } from './stream-forms.js';

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

export const isPlatformName = (value: unknown): value is PlatformName =>
  typeof value === 'string' && (platformNames as readonly string[]).includes(value);
export const isProtocol = (value: unknown): value is TargetProtocol =>
  typeof value === 'string' && (targetProtocols as readonly string[]).includes(value);

/** The platform_config keys a platform accepts over one of its deliveries. */
export function allowedConfigKeys(rule: PlatformRule, delivery: DeliveryRule): Set<ConfigKey> {
  const keys = new Set<ConfigKey>(['type', ...(rule.accepts ?? []), ...(delivery.requires ?? [])]);
  if (rule.integration) for (const k of ['integrated', ...rule.integration.requires, ...rule.integration.only] as const) keys.add(k);
  return keys;
}

/** What the rules of one target kind (platform and protocol) come to. */
export interface KindRules {
  platform: PlatformName;
  rule: PlatformRule;
  /** The protocol's delivery; undefined when the platform does not take that protocol. */
  delivery: DeliveryRule | undefined;
  /** The form target_stream must take; undefined when no single form applies. */
  stream: StreamForm | undefined;
  /** platform_config keys the kind requires. */
  requires: readonly ConfigKey[];
  /** platform_config keys the kind accepts. */
  allowed: ReadonlySet<ConfigKey>;
}

/**
 * The rules of a platform over a protocol. When the protocol is missing, unknown or not one the
 * platform takes, the platform's own requirements still apply (whatever protocol was sent):
 * what all its deliveries require, the stream form they share, and every key any of them
 * accepts. So `Pluto TV` over `rtmp` still needs host, port, password and stream_id, and the
 * one wrong protocol does not bury the rest under follow-on violations.
 * Undefined for an unknown platform.
 */
export function kindRules(platform: unknown, protocol: unknown): KindRules | undefined {
  if (!isPlatformName(platform)) return undefined;
  const rule = platformTable[platform];
  const delivery = isProtocol(protocol) ? rule.deliveries[protocol] : undefined;
  const candidates = delivery ? [delivery] : Object.values(rule.deliveries);
  const forms = new Set(candidates.map((d) => d.stream));
  const requires = candidates.reduce<readonly ConfigKey[]>(
    (common, d) => common.filter((k) => (d.requires ?? []).includes(k)),
    candidates[0]?.requires ?? [],
  );
  return {
    platform,
    rule,
    delivery,
    stream: forms.size === 1 ? candidates[0]?.stream : undefined,
    requires,
    allowed: new Set(candidates.flatMap((d) => [...allowedConfigKeys(rule, d)])),
  };
}
