/**
 * What an fMP4 init segment says about its tracks, read from its boxes (ISO/IEC 14496-12): the
 * RFC 6381 codec of each track from its sample entry (avcC, hvcC, av1C, vpcC, esds...), the
 * picture size, and the frame rate from a media segment's fragment. No decoding, no ffprobe:
 * the bytes the codec strings come from are the ones players read.
 */

/** One track of an init segment. */
export interface Fmp4Track {
  id: number;
  kind: 'video' | 'audio' | 'other';
  /** RFC 6381 codec string, or undefined when the sample entry is not one this reader knows. */
  codec: string | undefined;
  width?: number;
  height?: number;
  timescale: number;
  /** trex default sample duration (mvex), for fragments that name none. */
  defaultSampleDuration?: number;
}

export interface Box {
  type: string;
  /** The box's payload (after its header). */
  body: Buffer;
}

/** The boxes in `data`, in order (32- and 64-bit sizes; a box cut short ends the walk). */
export function* boxesOf(data: Buffer): Generator<Box> {
  let at = 0;
  while (at + 8 <= data.length) {
    let size = data.readUInt32BE(at);
    const type = data.toString('latin1', at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      if (at + 16 > data.length) return;
      size = Number(data.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) {
      size = data.length - at;
    }
    if (size < header || at + size > data.length) return;
    yield { type, body: data.subarray(at + header, at + size) };
    at += size;
  }
}

export const child = (data: Buffer, type: string): Buffer | undefined => {
  for (const box of boxesOf(data)) if (box.type === type) return box.body;
  return undefined;
};
const children = (data: Buffer, type: string): Buffer[] => [...boxesOf(data)].filter((b) => b.type === type).map((b) => b.body);
const path = (data: Buffer, ...types: string[]): Buffer | undefined => types.reduce<Buffer | undefined>((at, type) => (at ? child(at, type) : undefined), data);
const hex2 = (n: number) => n.toString(16).padStart(2, '0');

/** Bytes of a full box's payload after version and flags, and the version. */
const full = (body: Buffer) => ({ version: body[0] ?? 0, flags: body.length >= 4 ? body.readUIntBE(1, 3) : 0, rest: body.subarray(4) });

/** avc1/avc3: `avc1.PPCCLL` from the avcC record's profile, constraint flags and level. */
function avcCodec(type: string, entry: Buffer): string | undefined {
  const avcC = child(entry, 'avcC');
  if (!avcC || avcC.length < 4) return undefined;
  return `${type}.${hex2(avcC[1] as number)}${hex2(avcC[2] as number)}${hex2(avcC[3] as number)}`;
}

/** hvc1/hev1 (ISO/IEC 14496-15 Annex E): profile space and idc, reversed compatibility flags, tier and level, constraint bytes. */
function hevcCodec(type: string, entry: Buffer): string | undefined {
  const c = child(entry, 'hvcC');
  if (!c || c.length < 13) return undefined;
  const b1 = c[1] as number;
  const space = ['', 'A', 'B', 'C'][b1 >> 6] ?? '';
  let flags = c.readUInt32BE(2);
  let reversed = 0;
  for (let i = 0; i < 32; i++) {
    reversed = (reversed << 1) | (flags & 1);
    flags >>>= 1;
  }
  const constraints = [...c.subarray(6, 12)];
  while (constraints.length > 0 && constraints.at(-1) === 0) constraints.pop();
  const tail = constraints.map((b) => `.${b.toString(16).toUpperCase()}`).join('');
  return `${type}.${space}${b1 & 0x1f}.${(reversed >>> 0).toString(16).toUpperCase()}.${b1 & 0x20 ? 'H' : 'L'}${c[12] as number}${tail}`;
}

/** av01 (AV1 ISOBMFF binding §5): `av01.P.LLT.DD`. */
function av1Codec(entry: Buffer): string | undefined {
  const c = child(entry, 'av1C');
  if (!c || c.length < 3) return undefined;
  const b1 = c[1] as number;
  const b2 = c[2] as number;
  const depth = b2 & 0x40 ? (b2 & 0x20 ? 12 : 10) : 8;
  return `av01.${b1 >> 5}.${String(b1 & 0x1f).padStart(2, '0')}${b2 & 0x80 ? 'H' : 'M'}.${String(depth).padStart(2, '0')}`;
}

/** vp09 (VP codec ISOBMFF binding): `vp09.PP.LL.DD`. */
function vp9Codec(entry: Buffer): string | undefined {
  const c = child(entry, 'vpcC');
  if (!c || c.length < 7) return undefined;
  const { rest } = full(c);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `vp09.${pad(rest[0] as number)}.${pad(rest[1] as number)}.${pad((rest[2] as number) >> 4)}`;
}

/** An MPEG-4 descriptor at `at`: its tag, and where its payload starts and ends. */
function descriptorAt(data: Buffer, at: number): { tag: number; start: number; end: number } | undefined {
  if (at >= data.length) return undefined;
  const tag = data[at] as number;
  let size = 0;
  let i = at + 1;
  for (let n = 0; n < 4 && i < data.length; n++) {
    const b = data[i++] as number;
    size = (size << 7) | (b & 0x7f);
    if ((b & 0x80) === 0) break;
  }
  return i + size > data.length ? undefined : { tag, start: i, end: i + size };
}

/** mp4a: `mp4a.40.<audio object type>` from the AudioSpecificConfig, `mp4a.<oti>` for other MPEG-4 audio. */
function mp4aCodec(entry: Buffer): string | undefined {
  const esds = child(entry, 'esds');
  if (!esds) return undefined;
  const data = full(esds).rest;
  const es = descriptorAt(data, 0);
  if (!es || es.tag !== 0x03) return undefined;
  const esFlags = data[es.start + 2] ?? 0;
  let at = es.start + 3;
  if (esFlags & 0x80) at += 2;
  if (esFlags & 0x40) at += 1 + (data[at] ?? 0);
  if (esFlags & 0x20) at += 2;
  const config = descriptorAt(data, at);
  if (!config || config.tag !== 0x04) return undefined;
  const oti = data[config.start] ?? 0;
  if (oti !== 0x40) return `mp4a.${hex2(oti)}`;
  const specific = descriptorAt(data, config.start + 13);
  if (!specific || specific.tag !== 0x05 || specific.end - specific.start < 1) return undefined;
  let aot = (data[specific.start] as number) >> 3;
  if (aot === 31) {
    if (specific.end - specific.start < 2) return undefined;
    aot = 32 + ((((data[specific.start] as number) & 0x07) << 3) | ((data[specific.start + 1] as number) >> 5));
  }
  return `mp4a.40.${aot}`;
}

/** A visual sample entry's fields take 78 bytes before its boxes; an audio one 28 (more for QuickTime versions 1 and 2). */
const VISUAL_FIELDS = 78;
const audioFields = (entry: Buffer) => {
  const version = entry.length >= 10 ? entry.readUInt16BE(8) : 0;
  return 28 + (version === 1 ? 16 : version === 2 ? 36 : 0);
};

function sampleEntryOf(stsd: Buffer): { type: string; entry: Buffer } | undefined {
  const { rest } = full(stsd);
  const first = boxesOf(rest.subarray(4)).next();
  return first.done ? undefined : { type: first.value.type, entry: first.value.body };
}

function describeEntry(kind: Fmp4Track['kind'], type: string, entry: Buffer): Pick<Fmp4Track, 'codec' | 'width' | 'height'> {
  if (kind === 'video') {
    const boxes = entry.subarray(VISUAL_FIELDS);
    const size = entry.length >= 28 ? { width: entry.readUInt16BE(24), height: entry.readUInt16BE(26) } : {};
    const codec =
      type === 'avc1' || type === 'avc3' ? avcCodec(type, boxes)
      : type === 'hvc1' || type === 'hev1' ? hevcCodec(type, boxes)
      : type === 'av01' ? av1Codec(boxes)
      : type === 'vp09' ? vp9Codec(boxes)
      : undefined;
    return { codec, ...size };
  }
  if (kind === 'audio') {
    const boxes = entry.subarray(audioFields(entry));
    if (type === 'mp4a') return { codec: mp4aCodec(boxes) };
    // Codec strings that are their sample entry's type (ETSI TS 102 366, Opus and FLAC in ISOBMFF).
    if (type === 'ac-3' || type === 'ec-3' || type === 'Opus' || type === 'fLaC') return { codec: type };
  }
  return { codec: undefined };
}

/** The tracks of an fMP4 init segment (its moov), in order; empty when it has none. */
export function tracksOfInit(init: Buffer): Fmp4Track[] {
  const moov = child(init, 'moov');
  if (!moov) return [];
  const trex = new Map<number, number>();
  for (const t of children(path(moov, 'mvex') ?? Buffer.alloc(0), 'trex')) {
    const { rest } = full(t);
    if (rest.length >= 12) trex.set(rest.readUInt32BE(0), rest.readUInt32BE(8));
  }
  const tracks: Fmp4Track[] = [];
  for (const trak of children(moov, 'trak')) {
    const tkhd = child(trak, 'tkhd');
    const mdhd = path(trak, 'mdia', 'mdhd');
    const hdlr = path(trak, 'mdia', 'hdlr');
    const stsd = path(trak, 'mdia', 'minf', 'stbl', 'stsd');
    if (!tkhd || !mdhd || !hdlr || !stsd) continue;
    const th = full(tkhd);
    const id = th.version === 1 ? th.rest.readUInt32BE(16) : th.rest.readUInt32BE(8);
    const mh = full(mdhd);
    const timescale = mh.version === 1 ? mh.rest.readUInt32BE(16) : mh.rest.readUInt32BE(8);
    const handler = full(hdlr).rest.toString('latin1', 4, 8);
    const kind = handler === 'vide' ? 'video' : handler === 'soun' ? 'audio' : 'other';
    const sample = sampleEntryOf(stsd);
    const described = sample ? describeEntry(kind, sample.type, sample.entry) : { codec: undefined };
    const defaultSampleDuration = trex.get(id);
    tracks.push({ id, kind, timescale, ...described, ...(defaultSampleDuration ? { defaultSampleDuration } : {}) });
  }
  return tracks;
}

/**
 * The frame rate of a video track in one media segment (the head holding its moof is enough):
 * samples over their summed durations; undefined when the fragment does not say.
 */
export function frameRateOf(segmentHead: Buffer, track: Fmp4Track): number | undefined {
  const moof = child(segmentHead, 'moof');
  if (!moof) return undefined;
  let samples = 0;
  let ticks = 0;
  for (const traf of children(moof, 'traf')) {
    const tfhd = child(traf, 'tfhd');
    if (!tfhd) continue;
    const th = full(tfhd);
    if (th.rest.readUInt32BE(0) !== track.id) continue;
    let at = 4;
    if (th.flags & 0x01) at += 8;
    if (th.flags & 0x02) at += 4;
    const defaultDuration = th.flags & 0x08 ? th.rest.readUInt32BE(at) : track.defaultSampleDuration;
    for (const trun of children(traf, 'trun')) {
      const tr = full(trun);
      const count = tr.rest.readUInt32BE(0);
      let p = 4 + (tr.flags & 0x01 ? 4 : 0) + (tr.flags & 0x04 ? 4 : 0);
      const perSample = [0x100, 0x200, 0x400, 0x800].filter((f) => tr.flags & f).length * 4;
      for (let i = 0; i < count; i++) {
        let duration = defaultDuration;
        if (tr.flags & 0x100) duration = p + 4 <= tr.rest.length ? tr.rest.readUInt32BE(p) : undefined;
        if (duration === undefined) return undefined;
        ticks += duration;
        p += perSample;
      }
      samples += count;
    }
  }
  if (samples === 0 || ticks === 0 || track.timescale === 0) return undefined;
  return Math.round((samples * track.timescale * 1000) / ticks) / 1000;
}
