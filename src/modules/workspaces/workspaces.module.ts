import { Authenticator } from '../../platform/auth/authenticator.js';
import { KeyRing } from '../../platform/auth/key-ring.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Db } from '../../platform/db/database.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { ModuleParts } from '../../platform/module-parts.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { deleteWorkspaceGrants } from './ingest-grants.repository.js';
import { IngestGrantService } from './ingest-grants.service.js';
import { WorkspaceDeletion } from './workspace-deletion.js';
import { workspaceRoutes } from './workspaces.routes.js';
import { WorkspaceService } from './workspaces.service.js';
import { existingWorkspaceIds } from './workspaces.repository.js';
import { workspaceUsageRoutes } from './workspace-usage.routes.js';
import type { WorkspaceUsage } from '../../platform/quota/workspace-usage.js';

export interface WorkspacesDeps {
  db: Db;
  box: SecretBox;
  clock: Clock;
  ids: IdGenerator;
  config: Pick<Config, 'timestampToleranceS'>;
  /** Each workspace's use of its quotas (the usage route). */
  usage: WorkspaceUsage;
}

/** Workspaces, their keys and ingest grants, the request authenticator over them, and workspace deletion. */
export interface Workspaces {
  workspaces: WorkspaceService;
  /** The signing keys of each workspace, cached (the authenticator and the playback edge read them). */
  keyRing: KeyRing;
  /** Which workspaces an ingest key may submit events for (admin API, CLI; read by statistics ingest). */
  ingestGrants: IngestGrantService;
  authenticator: Authenticator;
  /** Deletes a workspace with everything every module holds for it (each module registers its part). */
  deletion: WorkspaceDeletion;
  /** The ids among those given that are workspaces. */
  existing(ids: readonly string[]): Promise<Set<string>>;
  parts: ModuleParts;
}

/** Wires the workspaces module: the services, the authenticator, and its own part in deleting a workspace. */
export function createWorkspaces(deps: WorkspacesDeps): Workspaces {
  const { db, box, clock, ids } = deps;
  const workspaces = new WorkspaceService({ db, box, clock, ids });
  const keyRing = new KeyRing((owner) => workspaces.loadSigningKeys(owner), clock);
  const ingestGrants = new IngestGrantService({ db, clock });
  const authenticator = new Authenticator({ keys: keyRing, clock, toleranceS: deps.config.timestampToleranceS });
  const deletion = new WorkspaceDeletion(db);
  return {
    workspaces,
    keyRing,
    ingestGrants,
    authenticator,
    deletion,
    existing: (ids) => existingWorkspaceIds(db, ids),
    parts: {
      name: 'workspaces',
      apiRoutes: async (api) => {
        await workspaceRoutes(api, { workspaces, workspaceDeletion: deletion, keyRing, authenticator, ingestGrants });
        await workspaceUsageRoutes(api, deps.usage);
      },
      workspaceData: [
        { name: 'ingest_grants', deleteRows: deleteWorkspaceGrants },
        {
          name: 'keys',
          // The workspace and its keys are deleted last by the deletion itself; the caches forget them.
          forget: async (owner) => {
            keyRing.invalidate(owner);
            authenticator.forget();
          },
        },
      ],
    },
  };
}
