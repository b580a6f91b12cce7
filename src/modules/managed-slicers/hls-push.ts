import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { AdmissionVerdict } from './live/ingest-admission.js';
import { AppError } from '../../platform/errors.js';
import { receiveBodyFile, type ReceivedFile } from '../../platform/http/body-file.js';
import { isSafePathId, liveInputDir } from '../../platform/media/media-layout.js';
import type { BytesInFlight } from '../../platform/http/bytes-in-flight.js';
import type { LiveInputQuota } from './live-storage.js';
import { reserializePushedPlaylist, segmentHeadProblem } from './pushed-playlist.js';

/** Path of the push endpoint (outside /api/v4: the token in the path is the credential). */
export const HLS_PUSH_PATH = '/ingest/hls';

/** File names an encoder may push: playlists and segments, no path, no dotfile. */
export const HLS_PUSH_FILE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}\.(m3u8|ts|m4s|mp4|aac)$/;

/** Longest playlist an encoder may push (a live window names a few dozen files). */
export const HLS_PUSH_MAX_PLAYLIST_BYTES = 1024 * 1024;

/**
 * The keyless base of an `hls` slicer's ingest URL (`<base>/ingest/hls/<workspace>/<slicer>`): the
 * URL the encoder uses adds the slicer's stream key and the playlist's name (stream-key.ts).
 */
export const hlsPushBaseOf = (baseUrl: string, owner: string, slicerId: string): string => `${baseUrl}${HLS_PUSH_PATH}/${owner}/${slicerId}`;

/** Longest file an encoder may push (a segment of several seconds at a high bitrate). */
export const HLS_PUSH_MAX_BYTES = 64 * 1024 * 1024;

/** What a push may write, once its owner, slicer, token and file name were checked (before any body). */
export interface HlsPushGrant {
  /** The slicer's input folder. */
  dir: string;
  file: string;
}

/** The problems of a pushed playlist (none: it is stored as `reserializePushedPlaylist` writes it anew). */
export function pushedPlaylistProblems(text: string): string[] {
  const parsed = reserializePushedPlaylist(text);
  return parsed.ok ? [] : parsed.problems;
}

/** The first bytes of a file: enough for a container's magic behind a few ID3 tags. */
async function headOf(path: string): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(64 * 1024);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/**
 * Takes what an encoder pushes to an `hls` slicer: its owner, slicer, token and file name are
 * checked before any body is read (`authorize`), each file is streamed to a temporary name of
 * the slicer's input directory (never held in memory) and renamed into place, a playlist only
 * once it names nothing but files of that directory. The directory exists while the slicer runs
 * on ffmpeg; its ffmpeg reads the playlist from there. Never sees HTTP.
 */
export class HlsPushReceiver {
  constructor(
    private readonly mediaRoot: string,
    /** The ingest admission's verdict on a token presented for a slicer (only one that runs here can pass). */
    private readonly admit: (owner: string, slicerId: string, token: string, remoteAddress: string) => AdmissionVerdict,
    /** Bytes of pushed files being received at once by this instance (PLAYLINE_HLS_PUSH_MAX_BYTES_IN_FLIGHT). */
    readonly inFlight: BytesInFlight,
    /** The caps of a slicer's input folder and the workspace's storage quota. */
    readonly quota: LiveInputQuota,
  ) {}

  /** Streams a pushed body into a temporary file of the grant's folder (its size counted against the budget as it arrives). */
  receive(grant: HlsPushGrant, body: Readable, declaredBytes: number | undefined, onBytes?: (bytes: number) => void): Promise<ReceivedFile> {
    const playlist = grant.file.endsWith('.m3u8');
    const limit = playlist ? HLS_PUSH_MAX_PLAYLIST_BYTES : HLS_PUSH_MAX_BYTES;
    return receiveBodyFile(body, {
      path: join(grant.dir, `.${grant.file}.${randomBytes(6).toString('hex')}.tmp`),
      limitBytes: limit,
      declaredBytes,
      tooLargeDetail: `A pushed ${playlist ? 'playlist' : 'segment'} may be at most ${limit} bytes`,
      ...(onBytes ? { onBytes } : {}),
    });
  }

  /**
   * Puts a received file (or an empty one) in place: a playlist as re-serialised (refused and
   * removed when it names anything but files of its own folder), a segment only when it starts
   * as the media its name says (never a playlist under a segment's name).
   */
  async store(grant: HlsPushGrant, received: ReceivedFile | undefined): Promise<void> {
    const target = join(grant.dir, grant.file);
    if (received === undefined) return writeFile(target, '');
    try {
      if (grant.file.endsWith('.m3u8')) {
        // ffmpeg reads only what was written here from the parsed playlist, never the bytes as sent.
        const parsed = reserializePushedPlaylist(await readFile(received.path, 'latin1'));
        if (!parsed.ok) {
          throw new AppError('validation_failed', 'A pushed playlist may name only files pushed beside it', { errors: parsed.problems.map((message) => ({ path: '/body', message })) });
        }
        await writeFile(received.path, parsed.text);
      } else {
        const problem = segmentHeadProblem(grant.file, await headOf(received.path));
        if (problem !== undefined) throw new AppError('validation_failed', `A pushed segment must hold the media its name says: ${problem}`, { errors: [{ path: '/body', message: problem }] });
      }
      await rename(received.path, target);
    } finally {
      await rm(received.path, { force: true });
    }
  }

  async delete(owner: string, slicerId: string, token: string, file: string, remoteAddress: string): Promise<void> {
    const { dir } = await this.authorize(owner, slicerId, token, file, remoteAddress);
    await rm(join(dir, file), { force: true });
    this.quota.removed(owner);
  }

  /** Checks what the URL names, before any body is read; the folder the file goes to. */
  async authorize(owner: string, slicerId: string, token: string, file: string, remoteAddress: string): Promise<HlsPushGrant> {
    // The key is known only for a slicer that runs here: any other URL is refused alike.
    const verdict: AdmissionVerdict = isSafePathId(owner) && isSafePathId(slicerId) ? this.admit(owner, slicerId, token, remoteAddress) : { admitted: false, reason: 'bad_key' };
    if (!verdict.admitted && verdict.reason === 'paused') {
      throw new AppError('throttled', 'This address presented a wrong ingest token a moment ago: everything it pushes is refused for PLAYLINE_INGEST_FAILURE_PAUSE_MS; push again after it');
    }
    if (!verdict.admitted) {
      throw new AppError('ingest_token_invalid', 'This is not the ingest URL of an hls slicer: use the ingest_url the slicer shows');
    }
    if (!HLS_PUSH_FILE.test(file)) {
      throw new AppError('validation_failed', 'Push playlists (.m3u8) and segments (.ts, .m4s, .mp4, .aac) by plain file name', {
        errors: [{ path: '/file', message: 'must be a file name ending in .m3u8, .ts, .m4s, .mp4 or .aac' }],
      });
    }
    const dir = liveInputDir(this.mediaRoot, owner, slicerId);
    const found = await stat(dir).catch(() => undefined);
    if (!found?.isDirectory()) throw new AppError('not_found', `Slicer ${slicerId} takes no hls push now (it does not run on ffmpeg here, or it was deleted)`);
    return { dir, file };
  }
}
