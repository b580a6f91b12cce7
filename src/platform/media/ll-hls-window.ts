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
}

export interface LowLatencyWindowOptions extends LowLatencyShape {
  /** The window's directory (the slicer's live directory). */
  dir: string;
  /** The rendition: `media_<name>.m3u8`, `init_<name>.mp4`, `seg_<name>_<msn>.m4s`, `seg_<name>_<msn>_p<n>.m4s`. */
  name: string;
  clock: Clock;
}

interface ListedPart {
  uri: string;
  durationS: number;
  independent: boolean;
}

interface WindowSegment {
  msn: number;
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

/**
 * One live rendition written as an LL-HLS window (RFC 8216bis) from the fragments of ffmpeg's
 * fragmented MP4: each fragment is a partial segment (its own file, EXT-X-PART), a segment is
 * the concatenation of its parts (written whole once it ends, EXTINF as usual, so players that
 * do not speak LL-HLS read the same playlist), the next part is announced (EXT-X-PRELOAD-HINT),
 * and every segment carries EXT-X-PROGRAM-DATE-TIME from the ingest clock (the wall-clock time
 * the run's first fragment arrived, then media time). The playlist is written with hls-parser
 * after each part, to a temporary file renamed over it. Segments leaving the window are deleted
 * with their parts; a new run (`start`) starts a new playlist and deletes the files of the last.
 */
export class LowLatencyWindow {
  private segments: WindowSegment[] = [];
  private open: OpenSegment | undefined;
  private nextMsn = 0;
  private lastMsn: number | undefined;
  private anchor: { wallMs: number; mediaS: number } | undefined;
  private initUri: string;
  private running = false;
  private targetS: number;
  /** Files of the previous run, deleted once this run has a segment of its own. */
  private stale: string[] = [];

  constructor(private readonly options: LowLatencyWindowOptions) {
    this.initUri = `init_${options.name}.mp4`;
    this.targetS = Math.ceil(options.segmentTargetS);
  }

  /** Whether a segment of this run is complete. */
  hasSegment(): boolean {
    return this.segments.length > 0;
  }

  get playlistFile(): string {
    return `media_${this.options.name}.m3u8`;
  }

  /** A run of ffmpeg began with this init segment: a new playlist, numbered past the last one. */
  async start(init: Fmp4Init): Promise<void> {
    const prefix = `seg_${this.options.name}_`;
    this.stale = (await readdir(this.options.dir).catch(() => [] as string[])).filter((f) => f.startsWith(prefix) && f.endsWith('.m4s'));
    this.segments = [];
    this.open = undefined;
    this.anchor = undefined;
    this.nextMsn = runStartNumber(this.options.clock.now(), this.lastMsn);
    this.running = true;
    await this.writeAtomically(this.initUri, init.bytes);
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
        uri: `seg_${this.options.name}_${msn}.m4s`,
        parts: [],
        partsListed: true,
        startS: fragment.startS,
        endS: fragment.startS,
        bytes: [],
        size: 0,
      };
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
    if (!this.anchor || wallAtStart - (fragment.startS - this.anchor.mediaS) * 1000 < this.anchor.wallMs) {
      this.anchor = { wallMs: wallAtStart, mediaS: fragment.startS };
    }
  }

  private wallTimeOf(mediaS: number): number {
    const anchor = this.anchor as { wallMs: number; mediaS: number };
    return Math.round(anchor.wallMs + (mediaS - anchor.mediaS) * 1000);
  }

  /** The run ended (ffmpeg's connection closed): the open segment is written whole, no next part is announced. */
  async end(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.open) await this.close(this.open);
    else await this.writePlaylist();
  }

  private async close(open: OpenSegment): Promise<void> {
    this.open = undefined;
    await this.writeAtomically(open.uri, Buffer.concat(open.bytes));
    const durationS = open.endS - open.startS;
    this.targetS = Math.max(this.targetS, Math.ceil(durationS - 0.001));
    this.segments.push({ msn: open.msn, uri: open.uri, durationS, startS: open.startS, parts: open.parts, partsListed: open.partsListed });
    const gone = this.segments.splice(0, Math.max(0, this.segments.length - this.options.windowSegments));
    // Written before the files go, so no playlist names a deleted file.
    await this.writePlaylist();
    const files = [...gone.flatMap((s) => [s.uri, ...s.parts.map((p) => p.uri)]), ...this.stale];
    this.stale = [];
    await Promise.all(files.map((f) => rm(join(this.options.dir, f), { force: true })));
  }

  /** The playlist as it stands (tests read it through the file). */
  render(): string {
    const { partTargetS } = this.options;
    const map = new MediaInitializationSection({ uri: this.initUri });
    const listed = [...this.segments];
    const segments = listed.map(
      (s) =>
        new Segment({ uri: s.uri, duration: fixed(s.durationS), mediaSequenceNumber: s.msn, map, programDateTime: new Date(this.wallTimeOf(s.startS)), parts: [] as InstanceType<typeof PartialSegment>[] }),
    );
    // Parts are listed for the last three target durations only (RFC 8216bis 6.2.2); their files stay as long as their segment.
    const openListed = this.open?.partsListed === true;
    let recent = openListed && this.open ? this.open.endS - this.open.startS : 0;
    // And on three segments at most, the one being written included (hls-parser's reading of the same rule).
    let withParts = openListed ? 1 : 0;
    for (let i = listed.length - 1; i >= 0 && withParts < 3; i--, withParts++) {
      const s = listed[i] as WindowSegment;
      if (recent + s.durationS > 3 * this.targetS + 0.001) break;
      if (s.partsListed) (segments[i] as InstanceType<typeof Segment>).parts = s.parts.map((p) => new PartialSegment({ hint: false, uri: p.uri, duration: fixed(p.durationS), independent: p.independent }));
      recent += s.durationS;
    }
    if (this.open?.partsListed) {
      const open = this.open;
      const parts = open.parts.map((p) => new PartialSegment({ hint: false, uri: p.uri, duration: fixed(p.durationS), independent: p.independent }));
      if (this.running) parts.push(new PartialSegment({ hint: true, uri: `seg_${this.options.name}_${open.msn}_p${open.parts.length}.m4s` }));
      segments.push(new Segment({ mediaSequenceNumber: open.msn, map, programDateTime: new Date(this.wallTimeOf(open.startS)), parts }));
    }
    const first = listed[0]?.msn ?? this.open?.msn ?? this.nextMsn;
    const playlist = new MediaPlaylist({
      version: 9,
      independentSegments: true,
      targetDuration: this.targetS,
      mediaSequenceBase: first,
      partTargetDuration: partTargetS,
      // hls-parser's type asks for every attribute; CAN-SKIP-UNTIL (delta updates) is left out, HOLD-BACK is the RFC's default.
      lowLatencyCompatibility: { canBlockReload: true, partHoldBack: fixed(3 * partTargetS), holdBack: 3 * this.targetS } as { canBlockReload: boolean; canSkipUntil: number; holdBack: number; partHoldBack: number },
      segments,
    });
    return stringify(playlist);
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
