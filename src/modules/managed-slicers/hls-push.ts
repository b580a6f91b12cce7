import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../../platform/errors.js';

/** Where `hls` push ingest lands: the encoder's playlist and segments, read by the slicer's ffmpeg. */
export const hlsInputDir = (mediaRoot: string, owner: string, slicerId: string): string => join(mediaRoot, 'live-input', owner, slicerId);

/** Path of the push endpoint (outside /api/v4: the token in the path is the credential). */
export const HLS_PUSH_PATH = '/ingest/hls';

/** File names an encoder may push: playlists and segments, no path, no dotfile. */
export const HLS_PUSH_FILE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}\.(m3u8|ts|m4s|mp4|aac)$/;

/**
 * Tokens of `hls` push ingest URLs: an HMAC of the workspace and slicer under a key derived from
 * the server's secret key, so every instance verifies them with no storage access. The token
 * is part of the slicer's `ingest_url`, which only its workspace reads.
 */
export class HlsPushTokens {
  constructor(private readonly key: Buffer) {}

  tokenOf(owner: string, slicerId: string): string {
    return createHmac('sha256', this.key).update(`hls-push.${owner}.${slicerId}`).digest('base64url');
  }

  verify(owner: string, slicerId: string, token: string): boolean {
    const expected = Buffer.from(this.tokenOf(owner, slicerId));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** The ingest URL an encoder PUTs its HLS to (`-f hls -method PUT <url>`). */
  urlOf(baseUrl: string, owner: string, slicerId: string): string {
    return `${baseUrl}${HLS_PUSH_PATH}/${owner}/${slicerId}/${this.tokenOf(owner, slicerId)}/index.m3u8`;
  }
}

/** Longest file an encoder may push (a segment of several seconds at a high bitrate). */
export const HLS_PUSH_MAX_BYTES = 64 * 1024 * 1024;

const PATH_SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Takes what an encoder pushes to an `hls` slicer: each file is written whole (to a temporary
 * name, then renamed) into the slicer's input directory, which exists while the slicer runs
 * on ffmpeg; its ffmpeg reads the playlist from there. Never sees HTTP.
 */
export class HlsPushReceiver {
  constructor(
    private readonly mediaRoot: string,
    private readonly tokens: HlsPushTokens,
  ) {}

  async put(owner: string, slicerId: string, token: string, file: string, body: Buffer): Promise<void> {
    const dir = await this.checked(owner, slicerId, token, file);
    const temporary = join(dir, `.${file}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await writeFile(temporary, body);
      await rename(temporary, join(dir, file));
    } catch (err) {
      await rm(temporary, { force: true });
      throw err;
    }
  }

  async delete(owner: string, slicerId: string, token: string, file: string): Promise<void> {
    const dir = await this.checked(owner, slicerId, token, file);
    await rm(join(dir, file), { force: true });
  }

  private async checked(owner: string, slicerId: string, token: string, file: string): Promise<string> {
    if (!PATH_SAFE_ID.test(owner) || !PATH_SAFE_ID.test(slicerId) || !this.tokens.verify(owner, slicerId, token)) {
      throw new AppError('ingest_token_invalid', 'This is not the ingest URL of an hls slicer: use the ingest_url the slicer shows');
    }
    if (!HLS_PUSH_FILE.test(file)) {
      throw new AppError('validation_failed', 'Push playlists (.m3u8) and segments (.ts, .m4s, .mp4, .aac) by plain file name', {
        errors: [{ path: '/file', message: 'must be a file name ending in .m3u8, .ts, .m4s, .mp4 or .aac' }],
      });
    }
    const dir = hlsInputDir(this.mediaRoot, owner, slicerId);
    const found = await stat(dir).catch(() => undefined);
    if (!found?.isDirectory()) throw new AppError('not_found', `Slicer ${slicerId} takes no hls push now (it does not run on ffmpeg here, or it was deleted)`);
    return dir;
  }
}
