import type { App } from '../../platform/http/types.js';
import { catalogRoutes } from './catalog.routes.js';
import { scheduleRoutes } from './schedule.routes.js';
import type { SyndicationModule } from './syndication.module.js';
import { targetRoutes } from './target.routes.js';

/** Every syndication route, relative to /api/v4. */
export async function syndicationRoutes(api: App, module: SyndicationModule): Promise<void> {
  await targetRoutes(api, module);
  await scheduleRoutes(api, module);
  await catalogRoutes(api, module);
}
