import type { Migration } from 'kysely';
import { foundationMigrations } from './platform/db/migrations/index.js';
import { errorReportingMigrations } from './modules/error-reporting/error-reporting.migration.js';
import { syndicationMigrations } from './modules/syndication/syndication.migration.js';
import { managedSlicerMigrations } from './modules/managed-slicers/managed-slicers.migration.js';
import { playbackEdgeMigrations } from './modules/playback-edge/playback-edge.migration.js';
import { vodStatsJournalMigrations } from './modules/vod-stats/journal/journal.migration.js';
import { ingestGrantMigrations } from './modules/workspaces/ingest-grants.migration.js';
import { assetMigrations } from './modules/assets/assets.migration.js';
import { quotaMigrations } from './platform/quota/quota.migration.js';
import { webhookMigrations } from './modules/webhooks/webhooks.migration.js';

/**
 * Every migration of the database, by name: the foundation's and each module's, each in a number
 * range of its own (0001 foundation, 0200 error reporting, 0300 publishing, 0400 slicers, 0500
 * playback edge, 0600 statistics journal, 0610 ingest grants, 0700 assets, 0800 workspace quotas, 0900 event webhooks). The migrator runs
 * them in name order and allows unordered ones, so a module may add a number below one a
 * database already ran. A name two modules both claim stops the start.
 */
export const migrations: Record<string, Migration> = gather([
  foundationMigrations,
  errorReportingMigrations,
  syndicationMigrations,
  managedSlicerMigrations,
  playbackEdgeMigrations,
  vodStatsJournalMigrations,
  ingestGrantMigrations,
  assetMigrations,
  quotaMigrations,
  webhookMigrations,
]);

function gather(sets: readonly Record<string, Migration>[]): Record<string, Migration> {
  const all: Record<string, Migration> = {};
  for (const set of sets) {
    for (const [name, migration] of Object.entries(set)) {
      if (name in all) throw new Error(`Two modules register the migration ${name}`);
      all[name] = migration;
    }
  }
  return all;
}
