import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parseMediaPlaylist } from './hls-media-playlist.js';

/**
 * `manifest.json` of a packaged asset (`assetDir` in media-layout.ts): the one contract between
 * whoever writes packaged media (the asset library, the simulator, test fixtures), all through
 * `writeManifest`, and the playback edge, which reads it through `parsePackagedManifest`. It is
 * written last, so its presence means the asset is complete. Paths are relative to the asset's
 * directory.
 */

/** Renditions of one asset at most (one variant each in the multivariant playlist). */
export const MAX_RENDITIONS = 16;
/** Media segments of one rendition at most. */
export const MAX_SEGMENTS = 200_000;
/** Longest media segment, seconds. */
export const MAX_SEGMENT_S = 600;
/** Largest picture side of a rendition, pixels. */
export const MAX_RENDITION_SIDE = 16384;

export const MANIFEST_FILE = 'manifest.json';
/**
 * The manifest of an asset still being packaged (beside its segments, in the asset's directory):
 * the segments every rendition has so far, rewritten as more are written, removed once
 * `manifest.json` is in place. The edge serves it as a growing EVENT playlist.
 */
export const PROGRESSIVE_FILE = 'progressive.json';
export const POSTER_FILE = 'poster.jpg';

/**
 * A path inside the asset's directory: segments of `A-Z a-z 0-9 _ . -` that never start with a
 * dot, so neither `..` nor a hidden file can be named, and never an absolute path.
 */
const RelativePath = (description: string) => Type.String({ maxLength: 256, pattern: '^(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*$', description });

const PackagedSegmentSchema = Type.Object({
  uri: RelativePath('<rendition>/seg_<n>.m4s'),
  duration_s: Type.Number({ exclusiveMinimum: 0, maximum: MAX_SEGMENT_S }),
  bytes: Type.Integer({ minimum: 0 }),
  init: Type.Optional(
    RelativePath(
      'A new period starts at this segment (a recorded live event whose encoder reconnected): its own init segment, played after EXT-X-DISCONTINUITY; the segments after it use it until the next such one',
    ),
  ),
});

const PackagedRenditionSchema = Type.Object({
  name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$', description: 'e.g. 720p; also its directory' }),
  width: Type.Integer({ minimum: 1, maximum: MAX_RENDITION_SIDE }),
  height: Type.Integer({ minimum: 1, maximum: MAX_RENDITION_SIDE }),
  bandwidth: Type.Integer({ minimum: 1, description: 'Peak segment bit rate, bits/s (HLS BANDWIDTH)' }),
  average_bandwidth: Type.Integer({ minimum: 1, description: 'Average bit rate, bits/s (HLS AVERAGE-BANDWIDTH)' }),
  // Quoted in EXT-X-STREAM-INF: no quote, comma-separated codec names.
  codecs: Type.String({ maxLength: 200, pattern: '^[A-Za-z0-9.,_ -]+$', description: 'RFC 6381 codecs, e.g. avc1.64001f,mp4a.40.2' }),
  playlist: RelativePath('<name>/playlist.m3u8 as ffmpeg wrote it'),
  init: RelativePath('<name>/init.mp4'),
  segments: Type.Array(PackagedSegmentSchema, { minItems: 1, maxItems: MAX_SEGMENTS }),
});

export const PackagedManifestSchema = Type.Object({
  version: Type.Literal(1),
  duration_s: Type.Number({ exclusiveMinimum: 0, description: 'Packaged duration (the longest rendition), seconds' }),
  segment_s: Type.Number({ exclusiveMinimum: 0, description: 'Target segment duration, seconds' }),
  poster: Type.Optional(RelativePath('poster.jpg')),
  renditions: Type.Array(PackagedRenditionSchema, { minItems: 1, maxItems: MAX_RENDITIONS, description: 'Highest first' }),
});

export const ProgressiveManifestSchema = Type.Composite([
  PackagedManifestSchema,
  Type.Object({
    expected_duration_s: Type.Number({ exclusiveMinimum: 0, description: 'Duration the asset will have once packaged (the source\'s), seconds' }),
  }),
]);

export type PackagedRendition = Static<typeof PackagedRenditionSchema>;
export type ProgressiveManifest = Static<typeof ProgressiveManifestSchema>;
export type PackagedManifest = Static<typeof PackagedManifestSchema>;

/** What breaks the contract in a manifest (or, with `ProgressiveManifestSchema`, a progressive one), or undefined when it holds. */
function problemOf(value: unknown, schema: typeof PackagedManifestSchema | typeof ProgressiveManifestSchema = PackagedManifestSchema, file = MANIFEST_FILE): string | undefined {
  if (!Value.Check(schema, value)) {
    const first = Value.Errors(schema, value).First();
    return `${file} breaks the packaged layout at ${first?.path || '/'}: ${first?.message ?? 'invalid'}`;
  }
  const { renditions } = value as PackagedManifest;
  if (new Set(renditions.map((r) => r.name)).size !== renditions.length) return `${file} names a rendition twice`;
  for (const r of renditions) if (r.segments[0]?.init !== undefined) return `${file}: the first segment of ${r.name} starts no new period (its init is the rendition's)`;
  return undefined;
}

/** Parses `progressive.json` text; throws with the first problem when it breaks the contract. */
export function parseProgressiveManifest(text: string): ProgressiveManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${PROGRESSIVE_FILE} is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const problem = problemOf(parsed, ProgressiveManifestSchema, PROGRESSIVE_FILE);
  if (problem !== undefined) throw new Error(problem);
  return parsed as ProgressiveManifest;
}

/** Parses `manifest.json` text; throws with the first problem when it breaks the contract. */
export function parsePackagedManifest(text: string): PackagedManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`manifest.json is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const problem = problemOf(parsed);
  if (problem !== undefined) throw new Error(problem);
  return parsed as PackagedManifest;
}

/** Reads and parses the manifest of the packaged asset in `dir`; throws when it is missing or breaks the contract. */
export async function readPackagedManifest(dir: string): Promise<PackagedManifest> {
  let text: string;
  try {
    text = await readFile(join(dir, MANIFEST_FILE), 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(missing ? 'manifest.json is missing' : `manifest.json cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { cause: error });
  }
  return parsePackagedManifest(text);
}

/**
 * Writes `manifest.json` into `dir` atomically (a temporary name renamed over it), after checking
 * it against the contract: nothing is written that the edge would refuse.
 */
export async function writeManifest(dir: string, manifest: PackagedManifest): Promise<void> {
  const problem = problemOf(manifest);
  if (problem !== undefined) throw new Error(problem);
  await replaceFile(dir, MANIFEST_FILE, `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Writes `progressive.json` into `dir` atomically, after checking it like `writeManifest` (compact: it is rewritten often). */
export async function writeProgressiveManifest(dir: string, manifest: ProgressiveManifest): Promise<void> {
  const problem = problemOf(manifest, ProgressiveManifestSchema, PROGRESSIVE_FILE);
  if (problem !== undefined) throw new Error(problem);
  await replaceFile(dir, PROGRESSIVE_FILE, JSON.stringify(manifest));
}

async function replaceFile(dir: string, name: string, text: string): Promise<void> {
  // Dot-named and unique: never mistaken for content, and concurrent writers never share one.
  const temp = join(dir, `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temp, text);
    await rename(temp, join(dir, name));
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

export const round3 = (value: number) => Math.round(value * 1000) / 1000;

/** A rendition as encoded: its directory under the asset's is its name, holding `playlist.m3u8`, `init.mp4` and the segments. */
export interface EncodedRendition {
  name: string;
  width: number;
  height: number;
  codecs: string;
}

/**
 * The manifest entry of a rendition ffmpeg wrote into `<dir>/<name>/`: segments as its playlist
 * lists them, sizes from the files, peak and average bit rates from both. Throws when the
 * playlist is missing or lists no segment.
 */
export async function describeRendition(dir: string, rendition: EncodedRendition): Promise<PackagedRendition> {
  const { name } = rendition;
  const listed = parseMediaPlaylist(await readFile(join(dir, name, 'playlist.m3u8'), 'utf8'));
  if (listed.init === undefined) throw new Error(`rendition ${name} has no init segment`);
  if (listed.segments.length === 0) throw new Error(`rendition ${name} has no segments`);
  const segments = await Promise.all(
    listed.segments.map(async (s) => ({ uri: `${name}/${s.uri}`, duration_s: round3(s.durationS), bytes: (await stat(join(dir, name, s.uri))).size })),
  );
  return renditionOf(rendition, `${name}/${listed.init}`, segments);
}

/** A rendition's manifest entry from its segments (at least one): peak and average bit rates from their sizes. */
export function renditionOf(rendition: EncodedRendition, init: string, segments: PackagedRendition['segments']): PackagedRendition {
  const { name } = rendition;
  const totalS = segments.reduce((sum, s) => sum + s.duration_s, 0);
  const totalBits = segments.reduce((sum, s) => sum + s.bytes * 8, 0);
  const peak = Math.max(...segments.map((s) => (s.duration_s > 0 ? (s.bytes * 8) / s.duration_s : 0)));
  return {
    name,
    width: rendition.width,
    height: rendition.height,
    bandwidth: Math.ceil(peak),
    average_bandwidth: Math.ceil(totalS > 0 ? totalBits / totalS : 0),
    codecs: rendition.codecs,
    playlist: `${name}/playlist.m3u8`,
    init,
    segments,
  };
}

/** The manifest of these renditions (highest first): its duration is the longest rendition's. */
export function packagedManifestOf(renditions: PackagedRendition[], segmentS: number, poster?: string): PackagedManifest {
  const durationS = Math.max(...renditions.map((r) => r.segments.reduce((sum, s) => sum + s.duration_s, 0)));
  return { version: 1, duration_s: round3(durationS), segment_s: segmentS, ...(poster === undefined ? {} : { poster }), renditions };
}

/** A rendition's periods: runs of segments sharing one init segment (the rendition's, then each `init` a segment names). */
export function periodsOf(rendition: PackagedRendition): Array<{ init: string; from: number }> {
  const periods = [{ init: rendition.init, from: 0 }];
  rendition.segments.forEach((s, i) => {
    if (s.init !== undefined && i > 0) periods.push({ init: s.init, from: i });
  });
  return periods;
}
