/** The syndication module's wiring points (see CONTRIBUTING.md). */
export { syndicationRoutes } from './syndication.routes.js';
export { createSyndicationModule, type SyndicationModule, type SyndicationModuleDeps } from './syndication.module.js';
export { syndicationMigration } from './syndication.migration.js';
export type { SyndicationTables } from './syndication.tables.js';
