import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { LIVE_INDEX_FILE } from './media-layout.js';
import { TypeCompiler } from '@sinclair/typebox/compiler';

/**
 * `live.json` of a live window (beside its playlists, in `liveDir`): the one contract between the
 * window's one writer (`LowLatencyWindow` through `LowLatencyOutput`, the only code that knows
 * what a window holds) and everything that reads the window (the edge, blocking reloads,
 * publishing's pull URL and push). Readers learn the window's state from here, never by parsing
 * playlist text; the playlists players get are rendered from it (live-playlist.ts). It is written
 * atomically (a temporary file renamed over it) at every change of the window and kept in memory
 * for readers in the writing process.
 */

export const LIVE_WINDOW_FILE = 'live.json';

/** A file of the window: no folder, no dot first (so never `..` nor a temporary file). */
const WindowFile = (description: string) => Type.String({ maxLength: 160, pattern: '^[A-Za-z0-9_-][A-Za-z0-9_.-]*\\.(mp4|m4s|m3u8)$', description });
const Msn = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Media sequence number' });

const LivePartSchema = Type.Object({
  uri: WindowFile('seg_<rendition>_<msn>_p<n>.m4s'),
  duration_s: Type.Number({ exclusiveMinimum: 0 }),
  independent: Type.Boolean({ description: 'Starts with a keyframe (EXT-X-PART INDEPENDENT=YES)' }),
});

const SegmentStart = {
  msn: Msn,
  init: WindowFile('Its init segment (EXT-X-MAP); a new one after each encoder reconnect'),
  program_date_time_ms: Type.Integer({ description: 'EXT-X-PROGRAM-DATE-TIME on the ingest clock, Unix ms' }),
  discontinuity: Type.Boolean({ description: 'The first segment of a continued encoder run (EXT-X-DISCONTINUITY)' }),
  parts: Type.Array(LivePartSchema, { description: 'The parts players are offered (near the live edge only; empty elsewhere)' }),
};

const LiveSegmentSchema = Type.Object({
  ...SegmentStart,
  uri: WindowFile('seg_<rendition>_<msn>.m4s'),
  duration_s: Type.Number({ exclusiveMinimum: 0 }),
});

const LiveRenditionSchema = Type.Object({
  name: Type.String({ pattern: '^[A-Za-z0-9-]{1,32}$' }),
  playlist: WindowFile('media_<name>.m3u8, as rendered from this state'),
  codecs: Type.Optional(Type.String({ maxLength: 200, pattern: '^[A-Za-z0-9.,_ -]+$', description: 'RFC 6381 codecs of every track' })),
  bandwidth: Type.Optional(Type.Integer({ minimum: 1, description: 'Peak segment bit rate of the window (never below the profile\'s), bits/s' })),
  average_bandwidth: Type.Optional(Type.Integer({ minimum: 1, description: 'Average bit rate of the window, bits/s' })),
  resolution: Type.Optional(Type.Object({ width: Type.Integer({ minimum: 1 }), height: Type.Integer({ minimum: 1 }) })),
  frame_rate: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  target_duration_s: Type.Integer({ minimum: 1, description: 'EXT-X-TARGETDURATION: constant within an event' }),
  part_target_s: Type.Number({ exclusiveMinimum: 0 }),
  media_sequence: Msn,
  discontinuity_sequence: Type.Integer({ minimum: 0 }),
  segments: Type.Array(LiveSegmentSchema, { description: 'Complete segments, oldest first, numbered on from media_sequence' }),
  open: Type.Optional(Type.Object(SegmentStart, { description: 'The segment being written (its parts so far), while an encoder run writes' })),
  preload_hint: Type.Optional(WindowFile('The next part (EXT-X-PRELOAD-HINT): a part this window will publish')),
});

const LiveWindowSchema = Type.Object({
  version: Type.Literal(1),
  state: Type.Union([Type.Literal('live'), Type.Literal('reconnecting'), Type.Literal('ended')], {
    description: 'live: an encoder run writes; reconnecting: it stopped within the reconnect grace (ended_at_ms + grace_ms); ended: no more media',
  }),
  ended_at_ms: Type.Optional(Type.Integer({ description: 'When the last encoder run stopped' })),
  grace_ms: Type.Integer({ minimum: 0, description: 'A run starting within this long after the last one continues the window' }),
  index: WindowFile('The multivariant playlist, rendered from this state'),
  renditions: Type.Array(LiveRenditionSchema, { minItems: 1, maxItems: 16 }),
});

export type LivePart = Static<typeof LivePartSchema>;
export type LiveRendition = Static<typeof LiveRenditionSchema>;
export type LiveWindowState = Static<typeof LiveWindowSchema>;
type LiveEventState = LiveWindowState['state'];

/** What breaks the contract in a window state, or undefined when it holds. */
function problemOf(value: unknown): string | undefined {
  if (!checker.Check(value)) {
    const first = checker.Errors(value).First();
    return `${LIVE_WINDOW_FILE} breaks the live window contract at ${first?.path || '/'}: ${first?.message ?? 'invalid'}`;
  }
  const { renditions } = value as LiveWindowState;
  if (new Set(renditions.map((r) => r.name)).size !== renditions.length) return `${LIVE_WINDOW_FILE} names a rendition twice`;
  for (const r of renditions) {
    if (r.segments.some((s, i) => s.msn !== r.media_sequence + i)) return `${LIVE_WINDOW_FILE}: the segments of ${r.name} are not numbered on from its media sequence`;
    if (r.open && r.open.msn !== r.media_sequence + r.segments.length) return `${LIVE_WINDOW_FILE}: the open segment of ${r.name} does not follow its last one`;
  }
  return undefined;
}

/** Parses `live.json` text; throws with the first problem when it breaks the contract. */
export function parseLiveWindow(text: string): LiveWindowState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${LIVE_WINDOW_FILE} is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const problem = problemOf(parsed);
  if (problem !== undefined) throw new Error(problem);
  return parsed as LiveWindowState;
}

/** Same-process readers get the state the writer holds, without a read (a window changes every part). */
const inMemory = new Map<string, LiveWindowState>();
/** States read from files (another process writes them), by directory, while the file's version holds. */
const fromFiles = new Map<string, { version: string; state: LiveWindowState }>();
const CACHED_FILES = 256;
/** Compiled once: the writer checks every state it publishes (several a second), the reader every file it reads. */
const checker = TypeCompiler.Compile(LiveWindowSchema);

/**
 * The writer's side of the contract for one window directory: `publish` makes a state what
 * same-process readers see at once (it refuses, throwing, a state the reader would refuse) and
 * writes it to `live.json` (a temporary dot file renamed over it), coalescing the writes of states
 * published faster than the disk takes them; `then` is called after each write with the state
 * written (the output renders the multivariant playlist from it).
 */
export class LiveWindowPublisher {
  private latest: LiveWindowState | undefined;
  private writing: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly then: (state: LiveWindowState) => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  publish(state: LiveWindowState): void {
    const problem = problemOf(state);
    if (problem !== undefined) throw new Error(problem);
    this.latest = state;
    if (!this.closed) inMemory.set(this.dir, state);
    this.writing ??= this.drain()
      .catch((err: unknown) => this.onError(err))
      .finally(() => (this.writing = undefined));
  }

  /** Resolves once the last state published is in the file. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** The writer is done (its output closed): the last state is written, and readers go to the file from now on. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    inMemory.delete(this.dir);
  }

  private async drain(): Promise<void> {
    for (let written: LiveWindowState | undefined; this.latest !== written; ) {
      written = this.latest as LiveWindowState;
      const temp = join(this.dir, `.${LIVE_WINDOW_FILE}.${randomBytes(4).toString('hex')}.tmp`);
      try {
        await writeFile(temp, JSON.stringify(written));
        await rename(temp, join(this.dir, LIVE_WINDOW_FILE));
      } finally {
        await rm(temp, { force: true });
      }
      await this.then(written);
    }
  }
}

/** The window in `dir` as its writer last wrote it; undefined when there is none (or it breaks the contract). */
export async function readLiveWindow(dir: string): Promise<LiveWindowState | undefined> {
  const held = inMemory.get(dir);
  if (held) return held;
  const path = join(dir, LIVE_WINDOW_FILE);
  const found = await stat(path).catch(() => undefined);
  if (!found?.isFile()) return undefined;
  const version = `${found.ino}:${found.size}:${found.mtimeMs}`;
  const cached = fromFiles.get(dir);
  if (cached?.version === version) return cached.state;
  let state: LiveWindowState;
  try {
    state = parseLiveWindow(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
  fromFiles.delete(dir);
  fromFiles.set(dir, { version, state });
  if (fromFiles.size > CACHED_FILES) fromFiles.delete(fromFiles.keys().next().value as string);
  return state;
}

/** A rendition of the window by name (`main`, or its playlist `media_main`). */
export const renditionOf = (state: LiveWindowState, name: string): LiveRendition | undefined =>
  state.renditions.find((r) => r.name === name || r.playlist === `${name}.m3u8`);

/** The live edge of a rendition: the first media sequence number not complete yet and the parts of it published so far. */
export interface LiveEdge {
  nextMsn: number;
  openParts: number;
  targetDurationS: number;
}

export const liveEdgeOf = (r: LiveRendition): LiveEdge => ({
  nextMsn: r.media_sequence + r.segments.length,
  openParts: r.open?.parts.length ?? 0,
  targetDurationS: r.target_duration_s,
});

/** Whether a part (by file name) is published in the rendition now, listed or in a complete segment. */
export function hasPart(r: LiveRendition, file: string): boolean {
  if (r.open?.parts.some((p) => p.uri === file)) return true;
  const match = /_(\d+)_p\d+\.m4s$/.exec(file);
  const msn = match ? Number(match[1]) : NaN;
  // A part of a complete segment still in the window: its file stays as long as its segment's parts are kept.
  return r.segments.some((s) => s.msn === msn && s.parts.some((p) => p.uri === file));
}

/**
 * The event's state as players see it at `nowMs`: a window whose encoder stopped is `ended` once
 * the reconnect grace passed (no writer is needed to say so).
 */
export function eventStateOf(state: LiveWindowState, nowMs: number): LiveEventState {
  if (state.state === 'reconnecting' && state.ended_at_ms !== undefined && nowMs - state.ended_at_ms > state.grace_ms) return 'ended';
  return state.state;
}

/**
 * The multivariant playlist of a live window for a reader that is a player itself (publishing's
 * ffmpeg): its path once the window's writer published the window and rendered its index; undefined before.
 */
export function liveIndexPathOf(dir: string): string | undefined {
  const index = join(dir, LIVE_INDEX_FILE);
  return existsSync(join(dir, LIVE_WINDOW_FILE)) && existsSync(index) ? index : undefined;
}
