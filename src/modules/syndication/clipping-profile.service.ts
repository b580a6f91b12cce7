import type { Clock } from '../../platform/clock.js';
import { AppError, type FieldViolation } from '../../platform/errors.js';
import type { IdGenerator } from '../../platform/ids.js';
import { isPlatformName, platformTable } from './platform-table.js';
import * as repo from './syndication.repository.js';
import type { ClippingProfileCreateBody } from './syndication.schema.js';

export interface ClippingProfile {
  id: string;
  description: string;
  integrations: { service: string; account: string }[];
}

export interface ClippingProfileServiceDeps {
  db: repo.SyndicationDb;
  clock: Clock;
  ids: IdGenerator;
}

/** Platforms that publish through an integration (a row of the platform table with `integration`). */
export const integrationServices = Object.entries(platformTable)
  .filter(([, rule]) => rule.integration !== undefined)
  .map(([name]) => name);

const toProfile = (row: repo.ClippingProfileRow): ClippingProfile => ({
  id: row.id,
  description: row.description,
  integrations: JSON.parse(row.integrations) as ClippingProfile['integrations'],
});

/**
 * Clipping profiles hold the platform integrations (accounts) that integrated targets
 * publish through; `clipping_profile_id` of a target must name a compatible one.
 */
export class ClippingProfileService {
  constructor(private readonly deps: ClippingProfileServiceDeps) {}

  async create(workspaceId: string, body: ClippingProfileCreateBody): Promise<ClippingProfile> {
    const violations: FieldViolation[] = [];
    body.integrations.forEach((integration, i) => {
      if (!integrationServices.includes(integration.service)) {
        violations.push({ path: `/integrations/${i}/service`, message: `must be one of: ${integrationServices.join(', ')}` });
      }
    });
    if (violations.length > 0) throw new AppError('validation_failed', 'The clipping profile names services without integrations', { errors: violations });
    const row: repo.ClippingProfileRow = {
      id: this.deps.ids.hex(),
      workspace_id: workspaceId,
      description: body.description,
      integrations: JSON.stringify(body.integrations.map(({ service, account }) => ({ service, account }))),
      created_at: this.deps.clock.now(),
    };
    await repo.insertClippingProfile(this.deps.db, row);
    return toProfile(row);
  }

  /** The workspace's profiles; with `service`, only those that can publish to that platform. */
  async list(workspaceId: string, service?: string): Promise<ClippingProfile[]> {
    if (service !== undefined && !isPlatformName(service)) {
      throw new AppError('validation_failed', 'service must be a platform name', {
        errors: [{ path: '/querystring/service', message: 'must be a case-sensitive platform name' }],
      });
    }
    const profiles = (await repo.listClippingProfiles(this.deps.db, workspaceId)).map(toProfile);
    return service === undefined ? profiles : profiles.filter((p) => p.integrations.some((i) => i.service === service));
  }

  async get(workspaceId: string, id: string): Promise<ClippingProfile> {
    const row = await repo.findClippingProfile(this.deps.db, workspaceId, id);
    if (!row) throw new AppError('not_found', `Clipping profile ${id} does not exist`);
    return toProfile(row);
  }
}
