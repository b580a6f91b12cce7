import { randomBytes } from 'node:crypto';
import { readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify, types } from 'hls-parser';
import type { Clock } from '../clock.js';
import type { Fmp4Fragment, Fmp4Init } from './fmp4-fragments.js';

const { MediaPlaylist, Segment, PartialSegment, MediaInitializationSection } = types;

/** The LL-HLS shape of a live rendition: segment and part targets, the window's length. */
export interface LowLatencyShape {
  /** Seconds a segment lasts (it ends at the first keyframe past 90 % of it). */
  segmentTargetS: number;
  /** EXT-X-PART-INF PART-TARGET: no part is longer (ffmpeg cuts fragments a little before it). */
  partTargetS: number;
  /** Complete segments the playlist lists (older ones and their parts are deleted). */
  windowSegments: number;
  /** A segment that grows past this many bytes without a keyframe is closed anyway (a bound on what one segment holds in memory). */
  maxSegmentBytes: number;
  /**
   * DVR: seconds of complete segments the playlist keeps listing (and their files kept) behind the
   * live edge, beyond `windowSegments`; 0 = `windowSegments` only. Parts are kept for the last
   * `windowSegments` segments only. Default 0.
   */
  dvrWindowS?: number;
  /**
   * Encoder drop-outs: a run that starts within this many ms of the end of the last one continues
   * its playlist after an EXT-X-DISCONTINUITY (media sequence continued, nothing deleted); later, a
   * new playlist starts. 0 = every run starts a new playlist. Default 0.
   */
  reconnectGraceMs?: number;
  /**
   * Whether the DVR tail may grow by one more segment of `segmentBytes` (the workspace's storage
   * quota): when not, two of its oldest segments leave with each new one until it may again, so
   * the window trims its DVR tail instead of growing (the last `windowSegments` always stay).
   */
  mayGrow?: (segmentBytes: number) => boolean;
}

export interface LowLatencyWindowOptions extends LowLatencyShape {
  /** The window's directory (the slicer's live directory). */
  dir: string;
  /** The rendition: `media_<name>.m3u8`, `init_<name>.mp4`, `seg_<name>_<msn>.m4s`, `seg_<name>_<msn>_p<n>.m4s`. */
  name: string;
  clock: Clock;
  /** Called with each segment once its file is complete, before any file leaves the window (recording). Must not throw. */
  onSegment?: (segment: ClosedSegment) => Promise<void>;
}

/** A complete segment of the window, as a recorder takes it. */
export interface ClosedSegment {
  rendition: string;
  /** Its file, and its init segment's, in the window's directory. */
  uri: string;
  initUri: string;
  /** Which run of ffmpeg wrote it (one init segment per run), counted from 1 by this window. */
  run: number;
  durationS: number;
  bytes: number;
  /** Its EXT-X-PROGRAM-DATE-TIME (ingest clock, Unix ms). */
  startMs: number;
}

interface ListedPart {
  uri: string;
  durationS: number;
  independent: boolean;
}

/** One run of ffmpeg: its init segment and its media-time to ingest-clock mapping. */
interface Run {
  serial: number;
  initUri: string;
  anchor: { wallMs: number; mediaS: number } | undefined;
}

interface WindowSegment {
  msn: number;
  run: Run;
  /** The first segment of a run that continued the playlist: EXT-X-DISCONTINUITY. */
  discontinuity: boolean;
  uri: string;
  /** Media time of its first frame; its EXT-X-PROGRAM-DATE-TIME is this on the ingest clock (`wallTimeOf`). */
  startS: number;
  durationS: number;
  parts: ListedPart[];
  /**
   * False once a fragment of it was longer than the part target (a gap in the source's
   * timestamps): its parts are then not listed at all (a segment lists all its parts or none),
   * and players read it whole.
   */
  partsListed: boolean;
}

/** The playlist lines of a settled segment (no parts listed any more), kept while its run's anchor holds. */
interface RenderedSegment {
  anchorMs: number;
  text: string;
}

interface OpenSegment extends Omit<WindowSegment, 'durationS'> {
  endS: number;
  bytes: Buffer[];
  size: number;
}

/** The media sequence number a run starts at: ffmpeg's `-hls_start_number_source datetime` (UTC digits), past any number used before. */
export function runStartNumber(nowMs: number, after: number | undefined): number {
  const d = new Date(nowMs);
  const digits = `${d.getUTCFullYear()}${[d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()].map((n) => String(n).padStart(2, '0')).join('')}`;
  return Math.max(Number(digits), (after ?? 0) + 1);
}

const fixed = (n: number) => Math.round(n * 100000) / 100000;

/** The first line of a segment in hls-parser's output. */
const SEGMENT_LINE = /^#(EXT-X-DISCONTINUITY|EXT-X-MAP|EXT-X-PROGRAM-DATE-TIME|EXTINF|EXT-X-PART:)/;

/** Segments listed through hls-parser at the live edge; older ones are settled and their lines cached. */
const TAIL_SEGMENTS = 4;

/**
 * One live rendition written as an LL-HLS window (RFC 8216bis) from the fragments of ffmpeg's
 * fragmented MP4: each fragment is a partial segment (its own file, EXT-X-PART), a segment is
 * the concatenation of its parts (written whole once it ends, EXTINF as usual, so players that
 * do not speak LL-HLS read the same playlist), the next part is announced (EXT-X-PRELOAD-HINT),
 * and every segment carries EXT-X-PROGRAM-DATE-TIME from the ingest clock (the wall-clock time
 * the run's first fragment arrived, then media time). The playlist is written after each part, to
 * a temporary file renamed over it: the last segments with hls-parser, the settled ones (a DVR
 * window holds thousands) from lines cached per segment. Segments leaving the window (the last
 * `windowSegments`, or `dvrWindowS` of them) are deleted with their parts; parts older than the
 * last `windowSegments` segments are deleted earlier (they are listed near the edge only).
 *
 * A new run (`start`) within `reconnectGraceMs` of the last one's end continues the playlist: its
 * first segment carries EXT-X-DISCONTINUITY and its own init segment (EXT-X-MAP), numbering goes on,
 * and EXT-X-DISCONTINUITY-SEQUENCE counts the discontinuities that left the window. A later run
 * starts a new playlist numbered past the last one and deletes the files of the last.
 */
export class LowLatencyWindow {
  private segments: WindowSegment[] = [];
  private open: OpenSegment | undefined;
  private nextMsn = 0;
  private lastMsn: number | undefined;
  private run: Run;
  private running = false;
  private targetS: number;
  /** Clock ms the last run ended (undefined while one runs, or before the first). */
  private endedAt: number | undefined;
  /** The next segment begins a continued run. */
  private discontinuityPending = false;
  /** EXT-X-DISCONTINUITY-SEQUENCE: discontinuities that left the window. */
  private discontinuitySequence = 0;
  /** Files of the previous run, deleted once this run has a segment of its own. */
  private stale: string[] = [];
  /** Settled segments' playlist lines, by media sequence number. */
  private readonly rendered = new Map<number, RenderedSegment>();
  private readonly dvrWindowS: number;
  /** A hard bound on the segments listed, whatever their durations. */
  private readonly maxSegments: number;

  constructor(private readonly options: LowLatencyWindowOptions) {
    this.run = { serial: 0, initUri: `init_${options.name}.mp4`, anchor: undefined };
    this.targetS = Math.ceil(options.segmentTargetS);
    this.dvrWindowS = options.dvrWindowS ?? 0;
    // A segment lasts at least 90 % of the target unless the size bound closed it: twice the segments a DVR window of full ones needs.
    this.maxSegments = options.windowSegments + Math.ceil((2 * this.dvrWindowS) / options.segmentTargetS);
  }

  /** Whether a segment of this run is complete. */
  hasSegment(): boolean {
    return this.segments.some((s) => s.run === this.run);
  }

  get playlistFile(): string {
    return `media_${this.options.name}.m3u8`;
  }

  /** Whether the next `start` now would continue the playlist (a run ended within the grace). */
  withinGrace(): boolean {
    const grace = this.options.reconnectGraceMs ?? 0;
    return !this.running && this.endedAt !== undefined && grace > 0 && this.options.clock.now() - this.endedAt <= grace && this.segments.length > 0;
  }

  /** A run of ffmpeg began with this init segment: the playlist continued (within the grace) or a new one, numbered past the last. */
  async start(init: Fmp4Init): Promise<void> {
    const continued = this.withinGrace();
    this.open = undefined;
    this.running = true;
    this.endedAt = undefined;
    if (continued) {
      const msn = this.nextMsn;
      this.run = { serial: this.run.serial + 1, initUri: `init_${this.options.name}_${msn}.mp4`, anchor: undefined };
      this.discontinuityPending = true;
    } else {
      const prefix = `seg_${this.options.name}_`;
      const initPrefix = `init_${this.options.name}_`;
      this.stale = (await readdir(this.options.dir).catch(() => [] as string[])).filter(
        (f) => (f.startsWith(prefix) && f.endsWith('.m4s')) || (f.startsWith(initPrefix) && f.endsWith('.mp4')),
      );
      this.segments = [];
      this.rendered.clear();
      this.discontinuityPending = false;
      this.discontinuitySequence = 0;
      this.run = { serial: this.run.serial + 1, initUri: `init_${this.options.name}.mp4`, anchor: undefined };
      this.nextMsn = runStartNumber(this.options.clock.now(), this.lastMsn);
    }
    await this.writeAtomically(this.run.initUri, init.bytes);
  }

  /** A fragment of the current run: a part of the open segment, or the first part of the next one. */
  async add(fragment: Fmp4Fragment): Promise<void> {
    if (!this.running) return;
    const open = this.open;
    if (open) {
      const long = fragment.startS - open.startS >= this.options.segmentTargetS * 0.9;
      if ((fragment.independent && long) || open.size + fragment.bytes.length > this.options.maxSegmentBytes) await this.close(open);
    }
    this.observe(fragment);
    if (!this.open) {
      // A segment starts on a keyframe: fragments before the run's first one are dropped.
      if (!fragment.independent) return;
      const msn = this.nextMsn++;
      this.lastMsn = msn;
      this.open = {
        msn,
        run: this.run,
        discontinuity: this.discontinuityPending,
        uri: `seg_${this.options.name}_${msn}.m4s`,
        parts: [],
        partsListed: true,
        startS: fragment.startS,
        endS: fragment.startS,
        bytes: [],
        size: 0,
      };
      this.discontinuityPending = false;
    }
    const current = this.open as OpenSegment;
    const uri = `seg_${this.options.name}_${current.msn}_p${current.parts.length}.m4s`;
    await this.writeAtomically(uri, fragment.bytes);
    current.parts.push({ uri, durationS: fragment.durationS, independent: fragment.independent });
    if (fragment.durationS > this.options.partTargetS + 0.0005) current.partsListed = false;
    current.bytes.push(fragment.bytes);
    current.size += fragment.bytes.length;
    current.endS = Math.max(current.endS, fragment.startS + fragment.durationS);
    await this.writePlaylist();
  }

  /**
   * The ingest clock's time of a media time: a frame was captured no later than the fragment
   * holding it arrived, less the media time after it. The earliest such bound over the run's
   * fragments (ffmpeg's first ones come in a burst after it probed its input, later ones as
   * captured); every segment's date is read from it as the playlist is written, so the dates of a
   * window always follow its media time (they move earlier only while the run's first seconds come in).
   */
  private observe(fragment: Fmp4Fragment): void {
    const wallAtStart = this.options.clock.now() - fragment.durationS * 1000;
    const { anchor } = this.run;
    if (!anchor || wallAtStart - (fragment.startS - anchor.mediaS) * 1000 < anchor.wallMs) {
      this.run.anchor = { wallMs: wallAtStart, mediaS: fragment.startS };
    }
  }

  private wallTimeOf(run: Run, mediaS: number): number {
    const anchor = run.anchor as { wallMs: number; mediaS: number };
    return Math.round(anchor.wallMs + (mediaS - anchor.mediaS) * 1000);
  }

  /** The run ended (ffmpeg's connection closed): the open segment is written whole, no next part is announced. */
  async end(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.endedAt = this.options.clock.now();
    if (this.open) await this.close(this.open);
    else await this.writePlaylist();
  }

  private async close(open: OpenSegment): Promise<void> {
    this.open = undefined;
    const bytes = Buffer.concat(open.bytes);
    await this.writeAtomically(open.uri, bytes);
    const durationS = open.endS - open.startS;
    await this.options.onSegment?.({
      rendition: this.options.name,
      uri: open.uri,
      initUri: open.run.initUri,
      run: open.run.serial,
      durationS,
      bytes: bytes.length,
      startMs: this.wallTimeOf(open.run, open.startS),
    });
    this.targetS = Math.max(this.targetS, Math.ceil(durationS - 0.001));
    this.segments.push({ msn: open.msn, run: open.run, discontinuity: open.discontinuity, uri: open.uri, durationS, startS: open.startS, parts: open.parts, partsListed: open.partsListed });
    // At the workspace's storage quota (mayGrow) the window trims its DVR tail instead of growing.
    const gone = this.segments.splice(0, this.leaving(this.options.mayGrow?.(bytes.length) ?? true));
    for (const s of gone) {
      this.rendered.delete(s.msn);
      if (s.discontinuity) this.discontinuitySequence++;
    }
    // Parts older than the short window are never listed again: their files go with the segments leaving.
    const partsGone: string[] = [];
    for (const s of this.segments.slice(0, Math.max(0, this.segments.length - this.options.windowSegments))) {
      if (s.parts.length === 0) continue;
      partsGone.push(...s.parts.map((p) => p.uri));
      s.parts = [];
      s.partsListed = false;
    }
    // Written before the files go, so no playlist names a deleted file.
    await this.writePlaylist();
    const runsLeft = new Set(this.segments.map((s) => s.run));
    const initsGone = [...new Set(gone.map((s) => s.run))].filter((r) => !runsLeft.has(r) && r !== this.run).map((r) => r.initUri);
    const files = [...gone.flatMap((s) => [s.uri, ...s.parts.map((p) => p.uri)]), ...partsGone, ...initsGone, ...this.stale];
    this.stale = [];
    await Promise.all(files.map((f) => rm(join(this.options.dir, f), { force: true })));
  }

  /** How many of the oldest segments leave the window: past `windowSegments`, those older than the DVR window (and past the hard bound). */
  private leaving(mayGrow = true): number {
    const { windowSegments } = this.options;
    const count = this.segments.length;
    if (count <= windowSegments) return 0;
    let total = 0;
    for (const s of this.segments) total += s.durationS;
    let n = 0;
    while (count - n > windowSegments) {
      const oldest = this.segments[n] as WindowSegment;
      // The window still covers the DVR length without it.
      if (count - n > this.maxSegments || total - oldest.durationS >= this.dvrWindowS || (!mayGrow && n < 2)) {
        total -= oldest.durationS;
        n++;
      } else break;
    }
    return n;
  }

  /** The playlist as it stands (tests read it through the file). */
  render(): string {
    const { partTargetS } = this.options;
    const listed = this.segments;
    const tailFrom = Math.max(0, listed.length - TAIL_SEGMENTS);
    const segments = listed.slice(tailFrom).map(
      (s) =>
        new Segment({
          uri: s.uri,
          duration: fixed(s.durationS),
          mediaSequenceNumber: s.msn,
          discontinuity: s.discontinuity,
          map: new MediaInitializationSection({ uri: s.run.initUri }),
          programDateTime: new Date(this.wallTimeOf(s.run, s.startS)),
          parts: [] as InstanceType<typeof PartialSegment>[],
        }),
    );
    // Parts are listed for the last three target durations only (RFC 8216bis 6.2.2); their files stay as long as their segment.
    // None once the run ended: a playlist that lists parts and ends on a complete segment tells hls.js
    // the next segment continues the same timeline (its implied hint), which a reconnect then breaks
    // with EXT-X-DISCONTINUITY ("discontinuity sequence mismatch", fatal).
    const listParts = this.running;
    const openListed = this.open?.partsListed === true;
    let recent = openListed && this.open ? this.open.endS - this.open.startS : 0;
    // And on three segments at most, the one being written included (hls-parser's reading of the same rule).
    let withParts = openListed ? 1 : 0;
    for (let i = listed.length - 1; listParts && i >= tailFrom && withParts < 3; i--, withParts++) {
      const s = listed[i] as WindowSegment;
      if (recent + s.durationS > 3 * this.targetS + 0.001) break;
      if (s.partsListed) (segments[i - tailFrom] as InstanceType<typeof Segment>).parts = s.parts.map((p) => new PartialSegment({ hint: false, uri: p.uri, duration: fixed(p.durationS), independent: p.independent }));
      recent += s.durationS;
    }
    if (this.open?.partsListed) {
      const open = this.open;
      const parts = open.parts.map((p) => new PartialSegment({ hint: false, uri: p.uri, duration: fixed(p.durationS), independent: p.independent }));
      if (this.running) parts.push(new PartialSegment({ hint: true, uri: `seg_${this.options.name}_${open.msn}_p${open.parts.length}.m4s` }));
      segments.push(
        new Segment({
          mediaSequenceNumber: open.msn,
          discontinuity: open.discontinuity,
          map: new MediaInitializationSection({ uri: open.run.initUri }),
          programDateTime: new Date(this.wallTimeOf(open.run, open.startS)),
          parts,
        }),
      );
    }
    const first = listed[0]?.msn ?? this.open?.msn ?? this.nextMsn;
    const playlist = new MediaPlaylist({
      version: 9,
      independentSegments: true,
      targetDuration: this.targetS,
      mediaSequenceBase: first,
      discontinuitySequenceBase: this.discontinuitySequence,
      partTargetDuration: partTargetS,
      // hls-parser's type asks for every attribute; CAN-SKIP-UNTIL (delta updates) is left out, HOLD-BACK is the RFC's default.
      lowLatencyCompatibility: { canBlockReload: true, partHoldBack: fixed(3 * partTargetS), holdBack: 3 * this.targetS } as { canBlockReload: boolean; canSkipUntil: number; holdBack: number; partHoldBack: number },
      segments,
    });
    const text = stringify(playlist);
    if (tailFrom === 0) return text;
    // The settled segments go between the header and the tail hls-parser wrote.
    const lines = text.split('\n');
    const at = lines.findIndex((l) => SEGMENT_LINE.test(l));
    const head: string[] = [];
    let lastMap: string | undefined;
    for (const s of listed.slice(0, tailFrom)) {
      const text = this.settled(s, lastMap);
      head.push(text);
      lastMap = s.run.initUri;
    }
    // hls-parser names the tail's init segment again: left out when it is the one in force.
    let tail = lines.slice(at);
    if (tail[0] === `#EXT-X-MAP:URI="${lastMap}"`) tail = tail.slice(1);
    else if (tail[0] === '#EXT-X-DISCONTINUITY' && tail[1] === `#EXT-X-MAP:URI="${lastMap}"`) tail = [tail[0], ...tail.slice(2)];
    return [...lines.slice(0, at), ...head, ...tail].join('\n');
  }

  /** A settled segment's lines (cached while its run's anchor holds); EXT-X-MAP when its init segment is not `lastMap`. */
  private settled(s: WindowSegment, lastMap: string | undefined): string {
    const anchorMs = this.wallTimeOf(s.run, s.startS);
    let cached = this.rendered.get(s.msn);
    if (!cached || cached.anchorMs !== anchorMs) {
      const lines = [`#EXT-X-PROGRAM-DATE-TIME:${new Date(anchorMs).toISOString()}`, `#EXTINF:${fixed(s.durationS)},`, s.uri];
      cached = { anchorMs, text: lines.join('\n') };
      this.rendered.set(s.msn, cached);
    }
    const prefix = [...(s.discontinuity ? ['#EXT-X-DISCONTINUITY'] : []), ...(lastMap === s.run.initUri ? [] : [`#EXT-X-MAP:URI="${s.run.initUri}"`])];
    return prefix.length === 0 ? cached.text : `${prefix.join('\n')}\n${cached.text}`;
  }

  private async writePlaylist(): Promise<void> {
    await this.writeAtomically(this.playlistFile, this.render());
  }

  private async writeAtomically(file: string, data: Buffer | string): Promise<void> {
    // A dot name: no reader of the window serves it.
    const temp = join(this.options.dir, `.${file}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      await writeFile(temp, data);
      await rename(temp, join(this.options.dir, file));
    } finally {
      await rm(temp, { force: true });
    }
  }
}
