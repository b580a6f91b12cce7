import type { Migration } from 'kysely';
import { foundationMigration } from './0001_foundation.js';
import { deploymentChecksMigration } from './0002_deployment_checks.js';
import { deliveryLogMigration, errorReportingMigration } from '../../../modules/error-reporting/error-reporting.migration.js';
import { managedSlicersMigration, slicerHostsMigration } from '../../../modules/managed-slicers/managed-slicers.migration.js';
import { pushOwnersMigration, syndicationMigration } from '../../../modules/syndication/syndication.migration.js';
import { playbackAdAssetsMigration, playbackEdgeMigration } from '../../../modules/playback-edge/playback-edge.migration.js';
import { dropSnapshotsMigration, journalBindingMigration, journalMigration, journalOwnersMigration } from '../../../modules/vod-stats/journal/journal.migration.js';
import { ingestGrantsMigration } from '../../../modules/workspaces/ingest-grants.migration.js';
import { assetsMigration } from '../../../modules/assets/assets.migration.js';

/**
 * Every migration, by number. Numbers are ranges per module so that modules never collide:
 * 0001-0099 foundation, 0100 vod-stats, 0200 error-reporting (0201 its delivery log), 0300 syndication (0301 the instance running each push),
 * 0400 managed-slicers (0401 their host leases), 0500 playback-edge, 0600 vod-stats journal of cluster mode (named
 * '0600_cluster' when it lived in modules/cluster: an executed name must stay registered),
 * 0610 workspace ingest grants, 0611 the owners of vod-stats journal rows, 0612 the binding of
 * the Redis statistics to the journal, 0700 assets (the media library), 0701 ad assets.
 * Unordered migrations are allowed (the migrator's setting), so a module may add a number below
 * one a database already ran.
 */
export const migrations: Record<string, Migration> = {
  '0001_foundation': foundationMigration,
  '0002_deployment_checks': deploymentChecksMigration,
  '0200_error_reporting': errorReportingMigration,
  '0201_error_reporting_delivery_log': deliveryLogMigration,
  '0300_syndication': syndicationMigration,
  '0301_syndication_push_owners': pushOwnersMigration,
  '0400_managed_slicers': managedSlicersMigration,
  '0401_managed_slicer_hosts': slicerHostsMigration,
  '0500_playback_edge': playbackEdgeMigration,
  '0600_cluster': journalMigration,
  '0601_vod_stats_drop_snapshots': dropSnapshotsMigration,
  '0610_workspace_ingest_grants': ingestGrantsMigration,
  '0611_vod_stats_journal_owners': journalOwnersMigration,
  '0612_vod_stats_journal_binding': journalBindingMigration,
  '0700_assets': assetsMigration,
  '0701_playback_ad_assets': playbackAdAssetsMigration,
};
