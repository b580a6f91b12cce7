import type { Migration } from 'kysely';
import { foundationMigration } from './0001_foundation.js';
import { deploymentChecksMigration } from './0002_deployment_checks.js';

/**
 * The foundation's migrations (workspaces, keys, deployment checks): 0001-0099. Each module
 * keeps its own in its `*.migration.ts`, numbered in a range of its own, and the composition
 * root gathers them (`src/migrations.ts`).
 */
export const foundationMigrations: Record<string, Migration> = {
  '0001_foundation': foundationMigration,
  '0002_deployment_checks': deploymentChecksMigration,
};
