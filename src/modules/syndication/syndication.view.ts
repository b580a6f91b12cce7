import type { ClippingProfile as ClippingProfileView, SyndicationSchedule, SyndicationTarget } from './syndication.schema.js';
import { SECRET_MASK } from './syndication.schema.js';
import type { ClippingProfile } from './clipping-profile.service.js';
import { kindRules, type ConfigKey } from './platform-table.js';
import type { ScheduleRow } from './syndication.repository.js';
import type { ScheduleStatus } from './schedule-status.js';
import { maskedConfig, type SealedTarget } from './target-secrets.js';
import type { TargetWithStatus } from './target.service.js';

const API = '/api/v4';

/**
 * A target as every response shows it: every field of the spec's table, secrets masked.
 * `target_stream` is the mask when a stream is stored, the generated pull URL of a Custom hls
 * target once a schedule on it has started (the destination must be given it), else `""`.
 */
export function targetView({ id, target, pullUrl, status }: TargetWithStatus): SyndicationTarget {
  const hlsPull = target.platform === 'Custom' && target.target_protocol === 'hls';
  const stream = hlsPull ? (pullUrl ?? '') : target.secret_fields.includes('target_stream') ? SECRET_MASK : '';
  return {
    '@id': `${API}/syndication-target/${id}`,
    '@type': 'SyndicationTarget',
    id,
    description: target.description,
    platform: target.platform,
    target_protocol: target.target_protocol,
    target_stream: stream,
    status,
    platform_config: platformConfigView(target),
  };
}

/** The keys of platform_config in the spec table's order, and what each shows when the target does not set it. */
const configKeysShown: readonly [ConfigKey | 'remote_id', string | boolean | undefined][] = [
  ['clipping_profile_id', ''],
  ['host', ''],
  ['integrated', false],
  ['page_id', ''],
  ['password', ''],
  ['port', undefined],
  ['re_schedule', false],
  ['remote_id', ''],
  ['stream_id', ''],
  ['type', 'push'],
];

/**
 * platform_config with every key of the target's kind, plus the reserved `remote_id`: stored
 * values, secrets masked, the spec's defaults for keys left unset (`integrated` and
 * `re_schedule` false, `type` "push") and "" for unset text. Keys that do not belong to the
 * kind (a zixi `host` on TikTok) are not shown.
 */
export function platformConfigView(
  target: Pick<SealedTarget, 'platform' | 'target_protocol' | 'platform_config' | 'secret_fields'>,
): SyndicationTarget['platform_config'] {
  const stored: Record<string, unknown> = maskedConfig(target);
  const allowed = kindRules(target.platform, target.target_protocol)?.allowed ?? new Set<ConfigKey>();
  const shown: Record<string, unknown> = {};
  for (const [key, unset] of configKeysShown) {
    if (key !== 'remote_id' && !allowed.has(key)) continue;
    const value = stored[key] ?? unset;
    if (value !== undefined) shown[key] = value;
  }
  return shown as SyndicationTarget['platform_config'];
}

export const targetDeletedView = (id: string) => ({
  '@id': `${API}/syndication-target/${id}`,
  '@type': 'SyndicationTarget' as const,
  message: 'Deleted' as const,
});

export const scheduleView = (row: ScheduleRow): SyndicationSchedule => ({
  '@id': `${API}/syndication-schedule/${row.id}`,
  '@type': 'SyndicationSchedule',
  id: row.id,
  syndication_target_id: row.target_id,
  content_id: row.content_id,
  content_type: row.content_type === 'c' ? 'c' : 'e',
  region: row.region,
  scte35_enabled: row.scte35_enabled === 1 ? 1 : 0,
  source_url_params: row.source_url_params,
  status: row.status as ScheduleStatus,
  ...(row.error !== null ? { error: row.error } : {}),
});

export const scheduleDeletedView = (id: string) => ({
  '@id': `${API}/syndication-schedule/${id}`,
  '@type': 'SyndicationSchedule' as const,
  message: 'Deleted' as const,
});

export const clippingProfileView = (profile: ClippingProfile): ClippingProfileView => ({
  '@id': `${API}/syndication-clipping-profiles/${profile.id}`,
  '@type': 'ClippingProfile',
  id: profile.id,
  description: profile.description,
  integrations: profile.integrations,
});

export const regionView = (name: string) => ({ '@type': 'SyndicationRegion' as const, id: name, name });

/** The Collection wrapper; `total_items` is always the number of items returned. */
export const collection = <T>(path: string, items: T[]) => ({
  '@id': `${API}${path}`,
  '@type': 'Collection' as const,
  items,
  total_items: items.length,
});
