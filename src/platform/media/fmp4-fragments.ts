import { boxesOf, child, tracksOfInit, type Fmp4Track } from './fmp4-tracks.js';

/**
 * Cuts a fragmented MP4 byte stream (ffmpeg's `-f mp4 -movflags +frag_keyframe+delay_moov+default_base_moof`
 * written to a socket) into its init segment (ftyp + moov) and its fragments (moof + mdat), each with
 * the time it starts at, its duration and whether it starts with a video keyframe: the pieces an
 * LL-HLS window is built from (ll-hls-window.ts). Boxes are read as bytes arrive; a box larger than
 * `maxBoxBytes` ends the stream with an error (a bound on what one connection can make us hold).
 */

/** The init segment of a run: its bytes and its tracks. */
export interface Fmp4Init {
  bytes: Buffer;
  tracks: Fmp4Track[];
}

/** One moof + mdat. */
export interface Fmp4Fragment {
  bytes: Buffer;
  /** Decode time of its first sample, seconds (the video track's, else the first track's). */
  startS: number;
  durationS: number;
  /** Its first video sample is a sync sample (or the stream has no video): a segment may start here. */
  independent: boolean;
}

export type Fmp4Piece = { kind: 'init'; init: Fmp4Init } | { kind: 'fragment'; fragment: Fmp4Fragment };

const SAMPLE_IS_NON_SYNC = 0x0001_0000;

interface TrafTiming {
  trackId: number;
  baseDecodeTime: number;
  ticks: number;
  firstSampleFlags: number | undefined;
}

/** Each traf of a moof: its track, base decode time (tfdt), summed sample durations and first sample flags. */
export function trafTimings(moof: Buffer, tracks: readonly Fmp4Track[]): TrafTiming[] {
  const out: TrafTiming[] = [];
  for (const traf of boxesOf(moof)) {
    if (traf.type !== 'traf') continue;
    const tfhd = child(traf.body, 'tfhd');
    const tfdt = child(traf.body, 'tfdt');
    if (!tfhd || tfhd.length < 8 || !tfdt || tfdt.length < 8) continue;
    const thFlags = tfhd.readUIntBE(1, 3);
    const trackId = tfhd.readUInt32BE(4);
    let at = 8;
    if (thFlags & 0x01) at += 8;
    if (thFlags & 0x02) at += 4;
    const defaultDuration = thFlags & 0x08 && at + 4 <= tfhd.length ? tfhd.readUInt32BE(at) : tracks.find((t) => t.id === trackId)?.defaultSampleDuration;
    if (thFlags & 0x08) at += 4;
    if (thFlags & 0x10) at += 4;
    const defaultFlags = thFlags & 0x20 && at + 4 <= tfhd.length ? tfhd.readUInt32BE(at) : undefined;
    const baseDecodeTime = tfdt[0] === 1 && tfdt.length >= 12 ? Number(tfdt.readBigUInt64BE(4)) : tfdt.readUInt32BE(4);
    let ticks = 0;
    let firstSampleFlags: number | undefined;
    for (const trun of boxesOf(traf.body)) {
      if (trun.type !== 'trun' || trun.body.length < 8) continue;
      const b = trun.body;
      const flags = b.readUIntBE(1, 3);
      const count = b.readUInt32BE(4);
      let p = 8 + (flags & 0x01 ? 4 : 0);
      const first = flags & 0x04 ? b.readUInt32BE(p) : undefined;
      if (flags & 0x04) p += 4;
      const perSample = [0x100, 0x200, 0x400, 0x800].filter((f) => flags & f).length * 4;
      if (p + count * perSample > b.length) continue;
      for (let i = 0; i < count; i++) {
        const duration = flags & 0x100 ? b.readUInt32BE(p) : (defaultDuration ?? 0);
        if (i === 0 && firstSampleFlags === undefined) {
          const sampleFlagsAt = p + (flags & 0x100 ? 4 : 0) + (flags & 0x200 ? 4 : 0);
          firstSampleFlags = first ?? (flags & 0x400 ? b.readUInt32BE(sampleFlagsAt) : defaultFlags);
        }
        ticks += duration;
        p += perSample;
      }
    }
    out.push({ trackId, baseDecodeTime, ticks, firstSampleFlags });
  }
  return out;
}

/** Start, duration and independence of a moof, read with the run's tracks. */
export function fragmentTiming(moof: Buffer, tracks: readonly Fmp4Track[]): Omit<Fmp4Fragment, 'bytes'> | undefined {
  const timings = trafTimings(moof, tracks);
  const video = tracks.find((t) => t.kind === 'video');
  const main = (video && timings.find((t) => t.trackId === video.id)) ?? timings[0];
  const track = main && tracks.find((t) => t.id === main.trackId);
  if (!main || !track || track.timescale <= 0) return undefined;
  // A fragment without a video sample (audio between two video fragments) cannot start a segment of a stream with video.
  const independent = video ? main.trackId === video.id && main.firstSampleFlags !== undefined && (main.firstSampleFlags & SAMPLE_IS_NON_SYNC) === 0 : true;
  return { startS: main.baseDecodeTime / track.timescale, durationS: main.ticks / track.timescale, independent };
}

/** Splits an fMP4 stream into its init segment and fragments as bytes arrive. */
export class Fmp4Splitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private head: Buffer[] = [];
  private tracks: Fmp4Track[] | undefined;
  private moof: Buffer | undefined;

  constructor(private readonly maxBoxBytes: number) {}

  /** The pieces completed by `chunk`; throws when a box is larger than the bound or the stream is not fMP4. */
  push(chunk: Buffer): Fmp4Piece[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const pieces: Fmp4Piece[] = [];
    for (;;) {
      const box = this.nextBox();
      if (!box) break;
      const type = box.toString('latin1', 4, 8);
      if (this.tracks === undefined) {
        this.head.push(box);
        if (type === 'moov') {
          const bytes = Buffer.concat(this.head);
          this.head = [];
          this.tracks = tracksOfInit(bytes);
          if (this.tracks.length === 0) throw new Error('the fMP4 stream\'s moov names no track');
          pieces.push({ kind: 'init', init: { bytes, tracks: this.tracks } });
        } else if (type !== 'ftyp' && type !== 'free') {
          throw new Error(`the fMP4 stream starts with a ${JSON.stringify(type)} box`);
        }
      } else if (type === 'moof') {
        this.moof = box;
      } else if (type === 'mdat' && this.moof) {
        const timing = fragmentTiming(this.moof.subarray(8), this.tracks);
        if (timing) pieces.push({ kind: 'fragment', fragment: { ...timing, bytes: Buffer.concat([this.moof, box]) } });
        this.moof = undefined;
      }
      // Other boxes after the moov (styp, sidx, the mfra ffmpeg writes at its end) are no part of any fragment.
    }
    return pieces;
  }

  private nextBox(): Buffer | undefined {
    if (this.pendingBytes < 8) return undefined;
    if ((this.pending[0] as Buffer).length < 8) this.pending = [Buffer.concat(this.pending)];
    const size = (this.pending[0] as Buffer).readUInt32BE(0);
    if (size < 8) throw new Error(`an fMP4 box of size ${size} (64-bit and open-ended sizes are not written by ffmpeg's fragmented output)`);
    if (size > this.maxBoxBytes) throw new Error(`an fMP4 box of ${size} bytes, more than the ${this.maxBoxBytes} allowed`);
    // Joined once the whole box is here, not on every chunk of a large mdat.
    if (this.pendingBytes < size) return undefined;
    if (this.pending.length > 1) this.pending = [Buffer.concat(this.pending)];
    const data = this.pending[0] as Buffer;
    const box = data.subarray(0, size);
    const rest = data.subarray(size);
    this.pending = rest.length > 0 ? [rest] : [];
    this.pendingBytes = rest.length;
    return Buffer.from(box);
  }
}
