import type { Runtime } from './runtime.js';
import type { WorkspaceDataPart } from './modules/workspaces/workspace-deletion.js';
import { deleteWorkspaceRows as deleteCallbackSettings } from './modules/error-reporting/error-reporting.repository.js';
import { deleteWorkspaceSlicers } from './modules/managed-slicers/managed-slicers.repository.js';
import { deleteWorkspaceRows as deletePlaybackCatalog } from './modules/playback-edge/playback-edge.repository.js';
import { deleteWorkspaceRows as deletePublishing, listActiveSchedules } from './modules/syndication/syndication.repository.js';
import { deleteWorkspaceAssets } from './modules/assets/assets.repository.js';
import { deleteWorkspaceGrants } from './modules/workspaces/ingest-grants.repository.js';

/**
 * What each module holds for a workspace, for `WorkspaceDeletion`: its rows (deleted through the
 * module's repository), what runs for it, what it keeps in memory or Redis. A new module that
 * stores data per workspace adds its part here.
 */
export function workspaceDataParts(runtime: Runtime): WorkspaceDataPart[] {
  return [
    {
      name: 'publishing',
      // Publishing stops before its schedules go (an active schedule is a running push).
      async stop(owner) {
        for (const schedule of await listActiveSchedules(runtime.storage.db, owner)) {
          await runtime.syndication.schedules.act(owner, schedule.id, 'stop').catch(() => undefined);
        }
      },
      deleteRows: deletePublishing,
    },
    {
      name: 'managed_slicers',
      // Slicer processes stop and their live output goes before the rows.
      stop: async (owner) => runtime.managedSlicers.live()?.stopWorkspace(owner),
      deleteRows: deleteWorkspaceSlicers,
    },
    {
      name: 'assets',
      // Packaging stops and the media goes before the rows (a running job writes under them).
      stop: (owner) => runtime.assets.service.stopAndRemoveMedia(owner),
      deleteRows: deleteWorkspaceAssets,
    },
    { name: 'ingest_grants', deleteRows: deleteWorkspaceGrants },
    {
      name: 'playback_catalog',
      deleteRows: deletePlaybackCatalog,
      forget: async (owner) => runtime.playbackEdge.directory.invalidate(owner),
    },
    {
      name: 'error_reporting',
      deleteRows: deleteCallbackSettings,
      forget: async (owner) => {
        runtime.errorReporting.dispatcher.forgetWorkspace(owner);
        runtime.errorReporting.deliveryLog.forgetWorkspace(owner);
      },
    },
    // Statistics live in the store (memory or Redis), not in rows; the journal's batches that
    // name the workspace are erased again by the sweep after a restore or rebuild.
    { name: 'statistics', forget: (owner) => runtime.vodStats.store.eraseOwner(owner) },
    {
      name: 'keys',
      forget: async (owner) => {
        runtime.keyRing.invalidate(owner);
        runtime.authenticator.forget();
      },
    },
  ];
}
