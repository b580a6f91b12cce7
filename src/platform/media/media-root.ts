import { join, resolve } from 'node:path';

/** Where media lives: `PLAYLINE_MEDIA_DIR`, else `<data dir>/media`; what lives where below it is in media-layout.ts. */
export const mediaRootOf = (config: { dataDir: string; mediaDir?: string | undefined }): string => resolve(config.mediaDir ?? join(config.dataDir, 'media'));
