import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { AppError } from '../errors.js';

/** A request body received whole into a file, not yet taken by whoever it is for. */
export class ReceivedFile {
  constructor(
    readonly path: string,
    readonly bytes: number,
  ) {}
}

export interface ReceiveOptions {
  /** Where to write (a fresh path; the file must not exist). */
  path: string;
  limitBytes: number;
  /** The request's Content-Length, when it gave one. */
  declaredBytes: number | undefined;
  /** The 413's detail: what may be sent, naming the setting if there is one. */
  tooLargeDetail: string;
  /**
   * Called with each chunk's size before it is written; throwing (or rejecting) refuses the body
   * with that error (a byte budget, a quota). A promise holds the chunk, and the body, until it settles.
   */
  onBytes?: (bytes: number) => void | Promise<void>;
}

const cutOff = () => new AppError('bad_request', 'The upload ended before the whole file arrived; nothing was kept');

/**
 * Streams a request body to a file, never holding more than a chunk in memory. Beyond the limit
 * (declared or counted) it stops with 413; on any failure (the client went away, the disk is
 * full) the partial file is removed before the error is passed on.
 */
export async function receiveBodyFile(body: Readable, options: ReceiveOptions): Promise<ReceivedFile> {
  const { limitBytes, path } = options;
  const tooLarge = () => new AppError('payload_too_large', options.tooLargeDetail);
  if (options.declaredBytes !== undefined && options.declaredBytes > limitBytes) {
    // Nothing is read: the answer closes the connection (Fastify does so after a parser error).
    throw tooLarge();
  }
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (bytes > limitBytes) return callback(tooLarge());
      let pending: void | Promise<void>;
      try {
        pending = options.onBytes?.(chunk.length);
      } catch (error) {
        return callback(error as Error);
      }
      if (pending instanceof Promise) pending.then(() => callback(null, chunk), (error: unknown) => callback(error as Error));
      else callback(null, chunk);
    },
  });
  const file = createWriteStream(path, { flags: 'wx' });
  try {
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      let ended = false;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        // The request stays open (only paused), so the answer (413...) can still be written.
        body.unpipe(counter);
        body.pause();
        counter.destroy();
        file.destroy();
        reject(err);
      };
      body.once('error', fail);
      body.once('close', () => {
        if (!ended) fail(cutOff());
      });
      body.once('end', () => (ended = true));
      counter.once('error', fail);
      file.once('error', fail);
      file.once('close', () => {
        if (settled) return;
        settled = true;
        resolve();
      });
      body.pipe(counter).pipe(file);
    });
  } catch (err) {
    await rm(path, { force: true });
    if ((err as NodeJS.ErrnoException).code === 'ENOSPC') throw new AppError('media_volume_full', 'The media directory is full; the upload was discarded', { cause: err });
    if ((err as NodeJS.ErrnoException).code === 'ECONNRESET') throw cutOff();
    throw err;
  }
  return new ReceivedFile(path, bytes);
}
