import type { ClippingProfile as ClippingProfileView, SyndicationSchedule, SyndicationTarget } from './syndication.schema.js';
import { SECRET_MASK } from './syndication.schema.js';
import type { ClippingProfile } from './clipping-profile.service.js';
import type { ScheduleRow } from './syndication.repository.js';
import type { ScheduleStatus } from './schedule-status.js';
import { maskedConfig } from './target-secrets.js';
import type { TargetWithStatus } from './target.service.js';

const API = '/api/v4';

/**
 * A target as every response shows it: secrets masked. The one clear `target_stream` is the
 * pull URL the service generated for a Custom hls target (the destination must be given it).
 */
export function targetView({ id, target, pullUrl, status }: TargetWithStatus): SyndicationTarget {
  const hlsPull = target.platform === 'Custom' && target.target_protocol === 'hls';
  const stream = hlsPull ? (pullUrl ?? undefined) : target.secret_fields.includes('target_stream') ? SECRET_MASK : undefined;
  return {
    '@id': `${API}/syndication-target/${id}`,
    '@type': 'SyndicationTarget',
    id,
    description: target.description,
    platform: target.platform,
    target_protocol: target.target_protocol,
    ...(stream !== undefined ? { target_stream: stream } : {}),
    status,
    platform_config: maskedConfig(target),
  };
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
