/**
 * The embedded database's file in the data directory. On its own so that the CLI can check a
 * data directory without loading the database drivers (database.ts re-exports it).
 */
export const SQLITE_FILE = 'playline.db';
