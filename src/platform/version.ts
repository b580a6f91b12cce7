/** The server's version (OpenAPI, backups, the settings API). */
export const VERSION = '0.1.0';
