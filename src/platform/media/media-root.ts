import { join, resolve } from 'node:path';

/**
 * Where media lives: `PLAYLINE_MEDIA_DIR`, else `<data dir>/media`. Packaged assets are under
 * `<media root>/assets/<owner>/<asset id>/` (the layout the playback edge reads).
 */
export const mediaRootOf = (config: { dataDir: string; mediaDir?: string | undefined }): string => resolve(config.mediaDir ?? join(config.dataDir, 'media'));
