import type { Migration } from 'kysely';
import { foundationMigration } from './0001_foundation.js';
import { managedSlicersMigration } from '../../../modules/managed-slicers/managed-slicers.migration.js';
import { syndicationMigration } from '../../../modules/syndication/syndication.migration.js';

/**
 * Every migration, by number. Numbers are ranges per module so that modules never collide:
 */
export const migrations: Record<string, Migration> = {
  '0001_foundation': foundationMigration,
  '0300_syndication': syndicationMigration,
  '0400_managed_slicers': managedSlicersMigration,
};
