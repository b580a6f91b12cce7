import { open, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { frameRateOf, tracksOfInit, type Fmp4Track } from './fmp4-tracks.js';
import { parseMediaPlaylist } from './hls-media-playlist.js';
import { LIVE_SINGLE_PLAYLISTS } from './media-layout.js';

/** A variant URI of a live window's index.m3u8 that names one of its media playlists (in the window or one folder down). */
const MEDIA_PLAYLIST = /^([A-Za-z0-9_-]{1,64}\/)?[A-Za-z0-9_-]{1,128}\.m3u8$/;
/** The same rule for the init and media segments a media playlist names, relative to it. */
const WINDOW_FILE = /^[A-Za-z0-9_-]{1,128}\.(mp4|m4s)$/;
/** Enough of a media segment to hold its moof (ffmpeg's are a few KiB). */
const SEGMENT_HEAD_BYTES = 64 * 1024;
/** Init segments remembered (one per live rendition being played). */
const CACHED_INITS = 512;

/** Whether a live `index.m3u8` names no variant (and is no media playlist either): the one ffmpeg writes for stream copy of a pushed HLS source. */
export const namesNoVariant = (index: string): boolean => !index.includes('#EXT-X-STREAM-INF:') && !index.includes('#EXTINF');

/** What a variant holds, as measured from its window now. */
export interface VariantDescription {
  /** Peak segment bitrate of the window (segment bytes × 8 / EXTINF), bit/s; undefined without segments. */
  peakBps?: number;
  averageBps?: number;
  /** RFC 6381 codecs of every track, or undefined when one is not known. */
  codecs?: string;
  resolution?: { width: number; height: number };
  frameRate?: number;
}

interface InitEntry {
  mtimeMs: number;
  size: number;
  tracks: Fmp4Track[];
  frameRate?: number;
}

type Attribute = [name: string, value: string];

const attributesOf = (line: string): Attribute[] =>
  [...line.slice(line.indexOf(':') + 1).matchAll(/([A-Z0-9-]+)=("[^"]*"|[^,]*)/g)].map((m) => [m[1] as string, m[2] as string]);

/**
 * Describes the variants of a live window from its files: ffmpeg writes a live `index.m3u8` once,
 * and with `-c copy` (the `passthrough` profile) without CODECS and with a BANDWIDTH guessed from
 * a bitrate it does not know. Here each EXT-X-STREAM-INF is rewritten from what the window holds:
 * CODECS, RESOLUTION and FRAME-RATE from the init segment (parsed once per init segment, then
 * cached while its size and mtime stay) and the first media segment's fragment, BANDWIDTH (never
 * below what ffmpeg declared, which for transcoding profiles is their configured rate) and
 * AVERAGE-BANDWIDTH from the segments' sizes and durations.
 */
export class LiveStreamDescriber {
  private readonly inits = new Map<string, InitEntry>();

  /** `index` (the window's multivariant playlist, read from `dir`) with every variant it can measure described. */
  async describeIndex(dir: string, index: string): Promise<string> {
    const lines = (await this.withSingleVariant(dir, index)).split('\n');
    const out = [...lines];
    await Promise.all(
      lines.map(async (line, i) => {
        if (!line.startsWith('#EXT-X-STREAM-INF:')) return;
        const uri = lines.slice(i + 1).map((l) => l.trim()).find((l) => l !== '' && !l.startsWith('#'));
        if (uri === undefined || !MEDIA_PLAYLIST.test(uri)) return;
        const described = await this.describeVariant(join(dir, uri)).catch(() => undefined);
        if (described) out[i] = streamInfWith(line.trim(), described);
      }),
    );
    return out.join('\n');
  }

  /**
   * ffmpeg writes `index.m3u8` once, leaving out every variant whose bit rate it does not know
   * ("Bandwidth info not available"): stream copy of a pushed HLS source (hls push, `passthrough`)
   * gets an index with no variant at all, which no player can play. Such an index gets its one
   * variant back, the window's single media playlist, as soon as it holds a segment to measure.
   * The slicer writes the same into the file (LiveIndexKeeper, live-index.ts); this covers the
   * moments before it does.
   */
  private async withSingleVariant(dir: string, index: string): Promise<string> {
    if (!namesNoVariant(index)) return index;
    for (const playlist of LIVE_SINGLE_PLAYLISTS) {
      const described = await this.describeVariant(join(dir, playlist)).catch(() => undefined);
      if (described?.peakBps !== undefined) return `${index.trimEnd()}\n#EXT-X-STREAM-INF:BANDWIDTH=${described.peakBps}\n${playlist}\n`;
    }
    return index;
  }

  /** The variant whose media playlist is at `playlistPath`, as its window holds it now; undefined when it is not there. */
  async describeVariant(playlistPath: string): Promise<VariantDescription | undefined> {
    const text = await readFile(playlistPath, 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    const dir = dirname(playlistPath);
    const playlist = parseMediaPlaylist(text);
    const segments = playlist.segments.filter((s) => WINDOW_FILE.test(s.uri) && s.durationS > 0);
    const sizes = await Promise.all(segments.map(async (s) => (await stat(join(dir, s.uri)).catch(() => undefined))?.size));
    const measured = segments.flatMap((s, i) => (sizes[i] === undefined ? [] : [{ uri: s.uri, bits: (sizes[i] as number) * 8, durationS: s.durationS }]));
    const description: VariantDescription = {};
    if (measured.length > 0) {
      description.peakBps = Math.ceil(Math.max(...measured.map((m) => m.bits / m.durationS)));
      description.averageBps = Math.ceil(measured.reduce((sum, m) => sum + m.bits, 0) / measured.reduce((sum, m) => sum + m.durationS, 0));
    }
    const init = playlist.init !== undefined && WINDOW_FILE.test(playlist.init) ? await this.initOf(join(dir, playlist.init), measured[0] && join(dir, measured[0].uri)) : undefined;
    if (init) {
      const codecs = init.tracks.map((t) => t.codec);
      if (codecs.length > 0 && codecs.every((c) => c !== undefined)) description.codecs = codecs.join(',');
      const video = init.tracks.find((t) => t.kind === 'video');
      if (video?.width && video.height) description.resolution = { width: video.width, height: video.height };
      if (init.frameRate !== undefined) description.frameRate = init.frameRate;
    }
    return description;
  }

  /** The tracks of an init segment (and the video frame rate, from `firstSegment`), parsed once per version of the file. */
  private async initOf(path: string, firstSegment: string | undefined): Promise<InitEntry | undefined> {
    const found = await stat(path).catch(() => undefined);
    if (!found?.isFile()) return undefined;
    let entry = this.inits.get(path);
    if (!entry || entry.mtimeMs !== found.mtimeMs || entry.size !== found.size) {
      entry = { mtimeMs: found.mtimeMs, size: found.size, tracks: tracksOfInit(await readFile(path)) };
    }
    const video = entry.tracks.find((t) => t.kind === 'video');
    if (entry.frameRate === undefined && video && firstSegment !== undefined) {
      const rate = frameRateOf(await headOf(firstSegment), video);
      if (rate !== undefined) entry.frameRate = rate;
    }
    this.inits.delete(path);
    this.inits.set(path, entry);
    if (this.inits.size > CACHED_INITS) this.inits.delete(this.inits.keys().next().value as string);
    return entry;
  }
}

async function headOf(path: string): Promise<Buffer> {
  const file = await open(path);
  try {
    const buffer = Buffer.alloc(SEGMENT_HEAD_BYTES);
    const { bytesRead } = await file.read(buffer, 0, SEGMENT_HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/** An EXT-X-STREAM-INF line with the measured attributes in place of ffmpeg's; attributes it does not measure are kept. */
export function streamInfWith(line: string, d: VariantDescription): string {
  const declared = new Map(attributesOf(line));
  const set = new Map<string, string>();
  const declaredBandwidth = Number(declared.get('BANDWIDTH') ?? 0) || 0;
  const bandwidth = d.peakBps === undefined ? declaredBandwidth : Math.max(declaredBandwidth, d.peakBps);
  if (bandwidth > 0) set.set('BANDWIDTH', String(bandwidth));
  const average = d.averageBps ?? declared.get('AVERAGE-BANDWIDTH');
  if (average !== undefined) set.set('AVERAGE-BANDWIDTH', String(average));
  const codecs = d.codecs === undefined ? declared.get('CODECS') : `"${d.codecs}"`;
  if (codecs !== undefined) set.set('CODECS', codecs);
  const resolution = d.resolution ? `${d.resolution.width}x${d.resolution.height}` : declared.get('RESOLUTION');
  if (resolution !== undefined) set.set('RESOLUTION', resolution);
  const frameRate = d.frameRate === undefined ? declared.get('FRAME-RATE') : d.frameRate.toFixed(3);
  if (frameRate !== undefined) set.set('FRAME-RATE', frameRate);
  for (const [name, value] of declared) if (!set.has(name)) set.set(name, value);
  return `#EXT-X-STREAM-INF:${[...set].map(([name, value]) => `${name}=${value}`).join(',')}`;
}
