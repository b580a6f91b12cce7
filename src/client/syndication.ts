import type { Static } from '@sinclair/typebox';
import type { ClientCore } from './client.js';
import type {
  ClippingProfile,
  ClippingProfileCreateBody,
  ScheduleActionBody,
  ScheduleCreateBody,
  SchedulePatchBody,
  SyndicationRegion,
  SyndicationSchedule,
  SyndicationTarget,
  TargetCreateBody,
  TargetPatchBody,
  TargetTestResult,
} from '../modules/syndication/syndication.schema.js';

export interface Collection<T> {
  '@id': string;
  '@type': 'Collection';
  items: T[];
  total_items: number;
}

export interface Deleted {
  '@id': string;
  '@type': string;
  message: 'Deleted';
}

const enc = encodeURIComponent;

/**
 * SDK methods for publishing targets, schedules, regions and clipping profiles
 * (`client.syndication` once added to PlaylineClient).
 */
export class SyndicationApi {
  constructor(private readonly core: ClientCore) {}

  createTarget(body: TargetCreateBody): Promise<SyndicationTarget> {
    return this.core.request('POST', '/api/v4/syndication-target', { body });
  }

  listTargets(): Promise<Collection<SyndicationTarget>> {
    return this.core.request('GET', '/api/v4/syndication-target');
  }

  getTarget(id: string): Promise<SyndicationTarget> {
    return this.core.request('GET', `/api/v4/syndication-target/${enc(id)}`);
  }

  /** `platform` and `target_protocol` are required; platform_config keys set to null are removed. */
  updateTarget(id: string, body: TargetPatchBody): Promise<SyndicationTarget> {
    return this.core.request('PATCH', `/api/v4/syndication-target/${enc(id)}`, { body });
  }

  deleteTarget(id: string): Promise<Deleted> {
    return this.core.request('DELETE', `/api/v4/syndication-target/${enc(id)}`);
  }

  testTarget(id: string): Promise<Static<typeof TargetTestResult>> {
    return this.core.request('PATCH', `/api/v4/syndication-target-test/${enc(id)}`, { body: { test: 'rtmp-connection' } });
  }

  createSchedule(body: ScheduleCreateBody): Promise<SyndicationSchedule> {
    return this.core.request('POST', '/api/v4/syndication-schedule', { body });
  }

  listSchedules(targetId?: string): Promise<Collection<SyndicationSchedule>> {
    return this.core.request('GET', '/api/v4/syndication-schedule', { query: { syndication_target_id: targetId } });
  }

  getSchedule(id: string): Promise<SyndicationSchedule> {
    return this.core.request('GET', `/api/v4/syndication-schedule/${enc(id)}`);
  }

  updateSchedule(id: string, body: SchedulePatchBody): Promise<SyndicationSchedule> {
    return this.core.request('PATCH', `/api/v4/syndication-schedule/${enc(id)}`, { body });
  }

  deleteSchedule(id: string): Promise<Deleted> {
    return this.core.request('DELETE', `/api/v4/syndication-schedule/${enc(id)}`);
  }

  /** Start or stop publishing; the target's status follows. */
  scheduleAction(id: string, mode: ScheduleActionBody['mode']): Promise<SyndicationSchedule> {
    return this.core.request('PATCH', `/api/v4/syndication-schedule-action/${enc(id)}`, { body: { mode } });
  }

  listRegions(): Promise<Collection<Static<typeof SyndicationRegion>>> {
    return this.core.request('GET', '/api/v4/syndication-regions');
  }

  createClippingProfile(body: ClippingProfileCreateBody): Promise<ClippingProfile> {
    return this.core.request('POST', '/api/v4/syndication-clipping-profiles', { body });
  }

  /** With `service`, only the profiles that can publish to that platform. */
  listClippingProfiles(service?: string): Promise<Collection<ClippingProfile>> {
    return this.core.request('GET', '/api/v4/syndication-clipping-profiles', { query: { service } });
  }

  getClippingProfile(id: string): Promise<ClippingProfile> {
    return this.core.request('GET', `/api/v4/syndication-clipping-profiles/${enc(id)}`);
  }
}
