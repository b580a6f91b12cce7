import { mkdtemp, rm, stat, writeFile, rename } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../platform/clock.js';
import { Fmp4Splitter, type Fmp4Piece } from '../../platform/media/fmp4-fragments.js';
import { LowLatencyWindow, type ClosedSegment, type LowLatencyShape } from '../../platform/media/ll-hls-window.js';
import { LIVE_INDEX_FILE } from '../../platform/media/media-layout.js';

/** One rendition of a low-latency slicer: its name and the index.m3u8 line that names it (undefined: measured by LiveIndexKeeper). */
export interface LowLatencyRendition {
  name: string;
  streamInf: string | undefined;
}

export interface LowLatencyOutputOptions extends LowLatencyShape {
  /** The slicer's live directory. */
  dir: string;
  renditions: readonly LowLatencyRendition[];
  clock: Clock;
  onError: (err: unknown, rendition: string) => void;
  /** Each complete segment of every rendition, before it can leave its window (the recorder). */
  onSegment?: (segment: ClosedSegment) => Promise<void>;
}

/**
 * Where a low-latency slicer's ffmpeg writes: one Unix socket per rendition (in a private
 * temporary directory, mode 0700, so no other user can feed the window), each receiving that
 * rendition's fragmented MP4 and writing it as an LL-HLS window (LowLatencyWindow). A connection
 * is one run of ffmpeg: a new one replaces the last. Bytes are taken as fast as the disk writes
 * them (the socket is paused while a piece is written), and one box may not pass `maxSegmentBytes`.
 * The multivariant `index.m3u8` is written once the slicer's first segment exists.
 */
export class LowLatencyOutput {
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();
  private indexWritten = false;
  private ended = 0;
  /** Each rendition's chain of writes as it stands (close waits for them). */
  private readonly writes: Array<() => Promise<void>> = [];

  private constructor(
    private readonly options: LowLatencyOutputOptions,
    private readonly socketDir: string,
  ) {}

  static async open(options: LowLatencyOutputOptions): Promise<LowLatencyOutput> {
    const socketDir = await mkdtemp(join(tmpdir(), 'playline-ll-'));
    const output = new LowLatencyOutput(options, socketDir);
    try {
      for (const r of options.renditions) await output.listen(r);
    } catch (err) {
      await output.close();
      throw err;
    }
    return output;
  }

  /** Connections (runs of one rendition) ended and written out so far (tests). */
  get endedRuns(): number {
    return this.ended;
  }

  /** The ffmpeg output URL of a rendition. */
  urlOf(name: string): string {
    return `unix:${this.socketPath(name)}`;
  }

  /** Resolves once what the renditions received so far is written, ended runs included (their last segment closed). */
  async settled(): Promise<void> {
    // A socket's close event queues its run's end: let those of sockets just closed come first.
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all(this.writes.map((w) => w()));
  }

  /** Stops listening; the runs under way are ended (their open segments written whole) before it resolves. */
  async close(): Promise<void> {
    // Each run's end is queued by its socket's close event: wait for them all.
    const closed = [...this.sockets].map((socket) => new Promise<void>((resolve) => (socket.destroyed && !socket.readable ? resolve() : socket.once('close', () => resolve()))));
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(closed);
    await Promise.all(this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    // The sockets' close events have queued each run's end by now.
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all(this.writes.map((w) => w()));
    await rm(this.socketDir, { recursive: true, force: true });
  }

  private socketPath(name: string): string {
    return join(this.socketDir, `${name}.sock`);
  }

  private listen(rendition: LowLatencyRendition): Promise<void> {
    const { options } = this;
    const window = new LowLatencyWindow({ ...options, name: rendition.name });
    let current: Socket | undefined;
    // Pieces are written in order, across connections too (a run's end before the next run's start).
    let chain = Promise.resolve();
    this.writes.push(() => chain);
    const server = createServer((socket) => {
      current?.destroy();
      current = socket;
      this.sockets.add(socket);
      const splitter = new Fmp4Splitter(options.maxSegmentBytes);
      const handle = async (piece: Fmp4Piece) => {
        if (piece.kind === 'init') return window.start(piece.init);
        await window.add(piece.fragment);
        if (!this.indexWritten && window.hasSegment()) await this.writeIndex();
      };
      socket.on('data', (chunk: Buffer) => {
        let pieces: Fmp4Piece[];
        try {
          pieces = splitter.push(chunk);
        } catch (err) {
          options.onError(err, rendition.name);
          socket.destroy();
          return;
        }
        if (pieces.length === 0) return;
        socket.pause();
        chain = chain
          .then(async () => {
            for (const piece of pieces) await handle(piece);
          })
          .catch((err: unknown) => options.onError(err, rendition.name))
          .finally(() => socket.resume());
      });
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        this.sockets.delete(socket);
        if (current !== socket) return;
        current = undefined;
        chain = chain
          .then(() => window.end())
          .catch((err: unknown) => options.onError(err, rendition.name))
          .finally(() => this.ended++);
      });
    });
    this.servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.socketPath(rendition.name), () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  private async writeIndex(): Promise<void> {
    this.indexWritten = true;
    const path = join(this.options.dir, LIVE_INDEX_FILE);
    // An index kept from the last start (LiveIndexKeeper measured it) is left as it is.
    if (await stat(path).then(() => true, () => false)) return;
    const lines = ['#EXTM3U', '#EXT-X-VERSION:9', '#EXT-X-INDEPENDENT-SEGMENTS'];
    for (const r of this.options.renditions) if (r.streamInf !== undefined) lines.push(r.streamInf, `media_${r.name}.m3u8`);
    const temp = join(this.options.dir, `.${LIVE_INDEX_FILE}.ll.tmp`);
    await writeFile(temp, `${lines.join('\n')}\n`);
    await rename(temp, path);
  }
}
