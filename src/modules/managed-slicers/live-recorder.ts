import { randomBytes } from 'node:crypto';
import { appendFile, link, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../platform/clock.js';
import { tracksOfInit } from '../../platform/media/fmp4-tracks.js';
import type { ClosedSegment } from '../../platform/media/ll-hls-window.js';
import { recordingDir, recordingsOfSlicer } from '../../platform/media/media-layout.js';
import { failureLine, succeeded, type ProcessRunner } from '../../platform/media/media-process.js';
import { MAX_SEGMENTS, MANIFEST_FILE, packagedManifestOf, POSTER_FILE, renditionOf, round3, writeManifest, type PackagedRendition } from '../../platform/media/packaged-manifest.js';

/** A finished recording, ready to become an asset of its workspace. */
export interface FinishedRecording {
  workspaceId: string;
  slicerId: string;
  title: string;
  /** The directory holding manifest.json, the poster and the renditions (in the media root). */
  dir: string;
  startedAt: number;
  endedAt: number;
  durationMs: number;
  renditions: Array<{ name: string; width: number; height: number; bandwidth: number }>;
  storedBytes: number;
}

/** Where finished recordings go: the asset library (it answers the new asset's id). */
export interface RecordingSink {
  /** Why recordings cannot be taken now (the library is not available, or has not started yet); undefined when they can. Asked as each live event starts. */
  unavailableReason(): string | undefined;
  adopt(recording: FinishedRecording): Promise<{ assetId: string }>;
  /**
   * Whether the workspace may hold one more asset (PLAYLINE_QUOTA_ASSETS), asked as a recording
   * opens: a recording counts in the asset quota. One already open is finished and kept whatever
   * happens meanwhile (an acknowledged event is not lost); uploads are refused at the quota.
   */
  mayAdd?(owner: string): Promise<boolean>;
}

export interface LiveRecorderOptions {
  mediaRoot: string;
  owner: string;
  slicerId: string;
  /** The slicer's live directory, where the window's files are. */
  liveDir: string;
  /** The asset's title: the slicer's name and the event's start. */
  name: string;
  clock: Clock;
  sink: RecordingSink;
  /** Whether the workspace's storage still has room (the recording stops, the live goes on, when it has not). */
  mayGrow: () => Promise<boolean>;
  ffmpeg: string;
  run: ProcessRunner;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** A recording became an asset (operational events). */
  onReady?: (assetId: string, recording: FinishedRecording) => void;
}

/** What the recorder is doing, as the slicer's live status shows it. */
export interface RecordingStatus {
  state: 'idle' | 'recording' | 'stopped';
  /** Why recording stopped while the live went on (storage quota, length bound). */
  reason: string | null;
}

/** One journal line: a segment taken into the recording. */
interface JournalEntry {
  /** Rendition. */
  r: string;
  /** Segment file, and the init segment it plays with, in the rendition's directory. */
  uri: string;
  init: string;
  /** Seconds, bytes, and its program date-time (Unix ms). */
  d: number;
  b: number;
  at: number;
}

interface RenditionTake {
  /** Init file (in the recording) by run of the live window. */
  inits: Map<number, string>;
  entries: JournalEntry[];
}

interface Recording {
  id: string;
  dir: string;
  renditions: Map<string, RenditionTake>;
}

const JOURNAL = 'journal.ndjson';

/** How often a recording asks whether its workspace's storage still has room (ingest clock ms). */
const ROOM_CHECK_MS = 5_000;

/**
 * Keeps a live event for the library (issue "Live to VOD"): every complete segment of every
 * rendition, and the init segment of each run of ffmpeg, hard-linked from the live window into
 * `recordings/<owner>/<slicer>/<id>/<rendition>/` as the window closes it, so a segment leaving the
 * DVR window stays recorded, at no copy. Each one is appended to the recording's journal, from
 * which a recording a killed server left is finished the next time its slicer starts. When the
 * event ends (`finish`), the renditions are described from their init segments, a poster is taken
 * from the first segment, manifest.json is written (a reconnected encoder's segments start a new
 * period with their own init segment) and the directory is handed to the asset library: nothing is
 * encoded again, so it is ready in about a second whatever the event's length.
 *
 * Bounded: a recording stops (the live goes on, the reason shown) once its workspace's storage is
 * full (measured in the background every 5 s) or it holds MAX_SEGMENTS segments of a rendition. Operations run one at a time, in order.
 */
export class LiveRecorder {
  private current: Recording | undefined;
  private stopReason: string | null = null;
  private chain: Promise<void> = Promise.resolve();
  private hasRoom = true;
  private checking = false;
  private roomCheckedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: LiveRecorderOptions) {}

  status(): RecordingStatus {
    if (this.stopReason !== null) return { state: 'stopped', reason: this.stopReason };
    return { state: this.current ? 'recording' : 'idle', reason: null };
  }

  /** Takes a segment the live window closed (never throws: a failure is logged and stops this recording). */
  segment(segment: ClosedSegment): Promise<void> {
    return this.queue(() => this.take(segment));
  }

  /** The event ended: its recording becomes an asset (nothing happens without a segment). */
  finish(): Promise<void> {
    return this.queue(async () => {
      const recording = this.current;
      this.current = undefined;
      this.stopReason = null;
      if (recording) await this.finalize(recording);
    });
  }

  /** Recordings of this slicer a killed server left unfinished: each one finished now (before this run records). */
  recoverLeftovers(): Promise<void> {
    return this.queue(async () => {
      const dirs = await readdir(recordingsOfSlicer(this.options.mediaRoot, this.options.owner, this.options.slicerId)).catch(() => [] as string[]);
      for (const id of dirs.filter((d) => !d.startsWith('.'))) {
        const dir = recordingDir(this.options.mediaRoot, this.options.owner, this.options.slicerId, id);
        const recording = await this.fromJournal(id, dir);
        this.options.log.info({ slicerId: this.options.slicerId, recording: id }, 'finishing a recording an earlier run left unfinished');
        await this.finalize(recording);
      }
    });
  }

  private queue(work: () => Promise<void>): Promise<void> {
    const next = this.chain.then(work).catch((err: unknown) => this.options.log.warn({ err, slicerId: this.options.slicerId }, 'recording the live event failed'));
    this.chain = next;
    return next;
  }

  private async take(s: ClosedSegment): Promise<void> {
    if (this.stopReason !== null) return;
    this.checkRoom();
    if (!this.hasRoom) return this.stop('the workspace\'s storage quota is full: the rest of the event is not recorded');
    if (!this.current && this.options.sink.mayAdd && !(await this.options.sink.mayAdd(this.options.owner))) {
      return this.stop('the workspace holds its quota of assets (PLAYLINE_QUOTA_ASSETS): the event is not recorded');
    }
    const recording = this.current ?? (await this.open());
    let take = recording.renditions.get(s.rendition);
    if (!take) {
      take = { inits: new Map(), entries: [] };
      recording.renditions.set(s.rendition, take);
      await mkdir(join(recording.dir, s.rendition), { recursive: true });
    }
    if (take.entries.length >= MAX_SEGMENTS) return this.stop(`the recording holds ${MAX_SEGMENTS} segments, the most one asset may: the rest of the event is not recorded`);
    let init = take.inits.get(s.run);
    if (init === undefined) {
      init = `init_${take.inits.size}.mp4`;
      await link(join(this.options.liveDir, s.initUri), join(recording.dir, s.rendition, init));
      take.inits.set(s.run, init);
    }
    await link(join(this.options.liveDir, s.uri), join(recording.dir, s.rendition, s.uri));
    const entry: JournalEntry = { r: s.rendition, uri: s.uri, init, d: s.durationS, b: s.bytes, at: s.startMs };
    await appendFile(join(recording.dir, JOURNAL), `${JSON.stringify(entry)}\n`);
    take.entries.push(entry);
  }

  /**
   * Asks whether the workspace's storage has room at most every ROOM_CHECK_MS, in the background:
   * measuring it scans the workspace's live folders, which the window's writes must not wait for.
   */
  private checkRoom(): void {
    const now = this.options.clock.now();
    if (this.checking || now - this.roomCheckedAt < ROOM_CHECK_MS) return;
    this.checking = true;
    this.roomCheckedAt = now;
    this.options.mayGrow().then(
      (room) => (this.hasRoom = room),
      (err: unknown) => this.options.log.warn({ err, slicerId: this.options.slicerId }, 'could not measure the workspace\'s storage for the recording'),
    ).finally(() => (this.checking = false));
  }

  private stop(reason: string): void {
    this.stopReason = reason;
    this.options.log.warn({ slicerId: this.options.slicerId, reason }, 'recording stopped; the live event goes on');
  }

  private async open(): Promise<Recording> {
    const id = `${this.options.clock.now()}-${randomBytes(4).toString('hex')}`;
    const dir = recordingDir(this.options.mediaRoot, this.options.owner, this.options.slicerId, id);
    await mkdir(dir, { recursive: true });
    this.current = { id, dir, renditions: new Map() };
    return this.current;
  }

  private async fromJournal(id: string, dir: string): Promise<Recording> {
    const text = await readFile(join(dir, JOURNAL), 'utf8').catch(() => '');
    const recording: Recording = { id, dir, renditions: new Map() };
    for (const line of text.split('\n')) {
      let entry: JournalEntry;
      try {
        entry = JSON.parse(line) as JournalEntry;
      } catch {
        // A line cut off by the kill: its segment is left out.
        continue;
      }
      let take = recording.renditions.get(entry.r);
      if (!take) recording.renditions.set(entry.r, (take = { inits: new Map(), entries: [] }));
      take.entries.push(entry);
    }
    return recording;
  }

  private async finalize(recording: Recording): Promise<void> {
    const { dir } = recording;
    const renditions: PackagedRendition[] = [];
    for (const [name, take] of recording.renditions) {
      if (take.entries.length === 0) continue;
      const first = take.entries[0] as JournalEntry;
      const tracks = tracksOfInit(await readFile(join(dir, name, first.init)));
      const video = tracks.find((t) => t.kind === 'video');
      const codecs = tracks.map((t) => t.codec).filter((c): c is string => c !== undefined);
      const segments = take.entries.map((e, i) => ({
        uri: `${name}/${e.uri}`,
        duration_s: round3(e.d),
        bytes: e.b,
        // A new run of the encoder within the event: a new period with its own init segment.
        ...(i > 0 && e.init !== (take.entries[i - 1] as JournalEntry).init ? { init: `${name}/${e.init}` } : {}),
      }));
      renditions.push(renditionOf({ name, width: video?.width ?? 1, height: video?.height ?? 1, codecs: codecs.join(',') || 'avc1.64001f' }, `${name}/${first.init}`, segments));
      await writeFile(join(dir, name, 'playlist.m3u8'), playlistOf(take.entries));
    }
    if (renditions.length === 0) {
      this.options.log.info({ slicerId: this.options.slicerId, recording: recording.id }, 'the live event ended without a complete segment: no recording');
      await rm(dir, { recursive: true, force: true });
      return;
    }
    renditions.sort((a, b) => b.height - a.height || b.bandwidth - a.bandwidth);
    const top = renditions[0] as PackagedRendition;
    const poster = await this.poster(dir, top);
    const manifest = packagedManifestOf(renditions, Math.max(...renditions.flatMap((r) => r.segments.map((s) => s.duration_s))), poster ? POSTER_FILE : undefined);
    await writeManifest(dir, manifest);
    await rm(join(dir, JOURNAL), { force: true });
    const entries = [...recording.renditions.values()].flatMap((t) => t.entries);
    const startedAt = Math.min(...entries.map((e) => e.at));
    const endedAt = Math.max(...entries.map((e) => e.at + e.d * 1000));
    const finished: FinishedRecording = {
      workspaceId: this.options.owner,
      slicerId: this.options.slicerId,
      title: `${this.options.name} ${new Date(startedAt).toISOString().slice(0, 19).replace('T', ' ')} UTC`,
      dir,
      startedAt,
      endedAt: Math.round(endedAt),
      durationMs: Math.round(manifest.duration_s * 1000),
      renditions: renditions.map((r) => ({ name: r.name, width: r.width, height: r.height, bandwidth: r.bandwidth })),
      storedBytes: await storedBytesOf(dir),
    };
    const { assetId } = await this.options.sink.adopt(finished);
    this.options.log.info({ slicerId: this.options.slicerId, assetId, durationS: manifest.duration_s }, 'the live event is recorded: a ready asset');
    this.options.onReady?.(assetId, finished);
  }

  /** The poster: the first frame of the top rendition's first segment (undefined, logged, when ffmpeg cannot take it). */
  private async poster(dir: string, top: PackagedRendition): Promise<boolean> {
    const first = top.segments[0];
    if (!first) return false;
    const source = join(dir, '.poster-source.mp4');
    try {
      await writeFile(source, Buffer.concat([await readFile(join(dir, top.init)), await readFile(join(dir, first.uri))]));
      const args = ['-hide_banner', '-nostdin', '-y', '-v', 'error', '-f', 'mp4', '-i', `file:${source}`, '-frames:v', '1', '-q:v', '3', '-f', 'image2', join(dir, POSTER_FILE)];
      const result = await this.options.run(this.options.ffmpeg, args, {});
      if (succeeded(result)) return true;
      this.options.log.warn({ slicerId: this.options.slicerId, reason: failureLine(result) }, 'could not take the recording\'s poster frame');
      return false;
    } finally {
      await rm(source, { force: true });
    }
  }
}

/** A rendition's playlist as recorded (the edge writes its own from manifest.json; this one is for people and tools reading the folder). */
function playlistOf(entries: readonly JournalEntry[]): string {
  const target = Math.max(1, ...entries.map((e) => Math.ceil(e.d - 0.001)));
  const lines = ['#EXTM3U', '#EXT-X-VERSION:7', `#EXT-X-TARGETDURATION:${target}`, '#EXT-X-PLAYLIST-TYPE:VOD', '#EXT-X-INDEPENDENT-SEGMENTS'];
  let init: string | undefined;
  for (const e of entries) {
    if (e.init !== init) {
      if (init !== undefined) lines.push('#EXT-X-DISCONTINUITY');
      lines.push(`#EXT-X-MAP:URI="${e.init}"`);
      init = e.init;
    }
    lines.push(`#EXTINF:${e.d.toFixed(3)},`, e.uri);
  }
  lines.push('#EXT-X-ENDLIST');
  return `${lines.join('\n')}\n`;
}

/** Bytes of the files of a finished recording (the manifest, poster and renditions). */
async function storedBytesOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) for (const file of await readdir(path)) total += (await stat(join(path, file))).size;
    else if (entry.name === MANIFEST_FILE || entry.name === POSTER_FILE) total += (await stat(path)).size;
  }
  return total;
}
