import type { App } from '../../platform/http/types.js';
import { catalogRoutes } from './catalog.routes.js';
import { scheduleRoutes } from './schedule.routes.js';
import type { ClippingProfileService } from './clipping-profile.service.js';
import type { ScheduleService } from './schedule.service.js';
import type { TargetService } from './target.service.js';
import { targetRoutes } from './target.routes.js';

export interface SyndicationRouteDeps {
  targets: TargetService;
  schedules: ScheduleService;
  clippingProfiles: ClippingProfileService;
  regions: readonly string[];
}

/** Every syndication route, relative to /api/v4. */
export async function syndicationRoutes(api: App, deps: SyndicationRouteDeps): Promise<void> {
  await targetRoutes(api, deps);
  await scheduleRoutes(api, deps);
  await catalogRoutes(api, deps);
}
