import { timingSafeEqual } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../../platform/errors.js';
import { isSafePathId, LIVE_INDEX_FILE, liveDir } from '../../platform/media/media-layout.js';
import * as repo from './syndication.repository.js';

/** A file of the live window a pull URL serves. */
export interface PulledFile {
  path: string;
  contentType: string;
  /** Playlists change every segment: never cached. */
  playlist: boolean;
  /** The window's multivariant playlist (`playlist.m3u8`), whose variants are described from the window when served. */
  multivariant: boolean;
}

const CONTENT_TYPES: Record<string, string> = {
  m3u8: 'application/vnd.apple.mpegurl',
  m4s: 'video/iso.segment',
  mp4: 'video/mp4',
  ts: 'video/mp2t',
  aac: 'audio/aac',
  vtt: 'text/vtt',
};
/** Names the live window holds: playlists and segments, in the window or one rendition folder down. */
const FILE_NAME = /^([A-Za-z0-9_-]{1,64}\/)?[A-Za-z0-9_-]{1,128}\.([a-z0-9]{2,4})$/;

const notFound = () => new AppError('not_found', 'No such pull stream: the URL is unknown, or its target publishes nothing at the moment');

/**
 * The generated pull URL of a Custom hls target (`/syndication-pull/<target id>/<token>/playlist.m3u8`):
 * while one of the target's schedules is active, it serves that content's live window
 * (`playlist.m3u8` is the window's `index.m3u8`; the playlists' relative URIs resolve under the same
 * path). The random token, compared in constant time with the one generated at the first start, is
 * the credential; anything else is 404 without saying which part was wrong.
 */
export async function resolvePull(db: repo.SyndicationDb, mediaRoot: string, targetId: string, token: string, file: string): Promise<PulledFile> {
  const match = FILE_NAME.exec(file);
  const extension = match?.[2];
  const contentType = extension === undefined ? undefined : CONTENT_TYPES[extension];
  if (contentType === undefined) throw notFound();
  const target = await repo.findPullTarget(db, targetId);
  const expected = target?.pull_url?.split('/').at(-2);
  if (!target || expected === undefined || !sameToken(expected, token)) throw notFound();
  const content = await repo.findActiveContentOfTarget(db, target.workspace_id, targetId);
  if (content === undefined || !isSafePathId(content)) throw notFound();
  const multivariant = file === 'playlist.m3u8' || file === LIVE_INDEX_FILE;
  const path = join(liveDir(mediaRoot, target.workspace_id, content), multivariant ? LIVE_INDEX_FILE : file);
  const found = await stat(path).catch(() => undefined);
  if (!found?.isFile()) throw notFound();
  return { path, contentType, playlist: extension === 'm3u8', multivariant };
}

function sameToken(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
