import type { Migration } from 'kysely';
import { foundationMigration } from './0001_foundation.js';

/**
 * Every migration, by number. Numbers are ranges per module so that modules never collide:
 * 0001-0099 foundation, 0100 vod-stats, 0200 error-reporting, 0300 syndication,
 * 0400 managed-slicers, 0500 playback-edge, 0600 cluster.
 */
export const migrations: Record<string, Migration> = {
  '0001_foundation': foundationMigration,
};
