import { mkdtemp, rm, writeFile, rename } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../platform/clock.js';
import { Fmp4Splitter, type Fmp4Piece } from '../../platform/media/fmp4-fragments.js';
import { LowLatencyWindow, type ClosedSegment, type LowLatencyShape } from '../../platform/media/ll-hls-window.js';
import { renderLiveMultivariant } from '../../platform/media/live-playlist.js';
import { LiveWindowPublisher, type LiveWindowState } from '../../platform/media/live-window.js';
import { LIVE_INDEX_FILE } from '../../platform/media/media-layout.js';

/** One rendition of a low-latency slicer: its name and its profile's bit rate (bits/s; undefined: stream copy, measured from the window). */
export interface LowLatencyRendition {
  name: string;
  bandwidth: number | undefined;
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
 * It is the one writer of the window's contract (live-window.ts): after every change of a
 * rendition's window the state of all of them is published as `live.json` (and in memory), and the
 * multivariant `index.m3u8` is rendered from it once the slicer's first segment exists.
 */
export class LowLatencyOutput {
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly windows: LowLatencyWindow[] = [];
  private readonly publisher: LiveWindowPublisher;
  /** The index.m3u8 last written (it is rewritten when what it describes changes). */
  private indexText: string | undefined;
  private started = false;
  private ended = 0;
  /** Each rendition's chain of writes as it stands (close waits for them). */
  private readonly writes: Array<() => Promise<void>> = [];

  private constructor(
    private readonly options: LowLatencyOutputOptions,
    private readonly socketDir: string,
  ) {
    this.publisher = new LiveWindowPublisher(options.dir, (state) => this.writeIndex(state), (err) => options.onError(err, 'live.json'));
  }

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
    await this.publisher.flush();
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
    await this.publisher.close();
    await rm(this.socketDir, { recursive: true, force: true });
  }

  private socketPath(name: string): string {
    return join(this.socketDir, `${name}.sock`);
  }

  private listen(rendition: LowLatencyRendition): Promise<void> {
    const { options } = this;
    const window = new LowLatencyWindow({
      ...options,
      name: rendition.name,
      ...(rendition.bandwidth !== undefined ? { declaredBandwidth: rendition.bandwidth } : {}),
      onChange: () => this.publish(),
    });
    this.windows.push(window);
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
        if (piece.kind === 'init') {
          this.started = true;
          return window.start(piece.init);
        }
        await window.add(piece.fragment);
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

  /** The state of every rendition's window, as the contract describes the event: live while a run writes, reconnecting within the grace after, ended. */
  private state(): LiveWindowState {
    const grace = this.options.reconnectGraceMs ?? 0;
    const endedAt = this.windows.some((w) => w.isRunning) ? undefined : Math.max(...this.windows.map((w) => w.lastEndedAt ?? 0));
    return {
      version: 1,
      state: endedAt === undefined ? 'live' : grace > 0 ? 'reconnecting' : 'ended',
      ...(endedAt !== undefined ? { ended_at_ms: endedAt } : {}),
      grace_ms: grace,
      index: LIVE_INDEX_FILE,
      renditions: this.windows.map((w) => w.snapshot()),
    };
  }

  /** A window changed: the event's state is published (before the first run began there is none). */
  private publish(): void {
    if (!this.started) return;
    this.publisher.publish(this.state());
  }

  /** index.m3u8 rendered from the state written, once a segment exists, whenever what it describes changed. */
  private async writeIndex(state: LiveWindowState): Promise<void> {
    if (!state.renditions.some((r) => r.segments.length > 0)) return;
    const text = renderLiveMultivariant(state);
    if (text === this.indexText) return;
    const path = join(this.options.dir, LIVE_INDEX_FILE);
    const temp = join(this.options.dir, `.${LIVE_INDEX_FILE}.ll.tmp`);
    await writeFile(temp, text);
    await rename(temp, path);
    this.indexText = text;
  }
}
