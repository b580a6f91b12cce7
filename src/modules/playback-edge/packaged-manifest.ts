import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * `manifest.json` of a packaged asset: the contract between the asset library (which writes it
 * last, so its presence means the asset is complete) and the edge (which only reads it).
 * Layout: `<media root>/assets/<owner>/<asset id>/manifest.json` and the files it names.
 */

/**
 * A path inside the asset's directory: segments of `A-Z a-z 0-9 _ . -` that never start with a
 * dot, so neither `..` nor a hidden file can be named, and never an absolute path.
 */
const RelativePath = Type.String({ maxLength: 256, pattern: '^(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*$' });

export const PackagedSegmentSchema = Type.Object({
  uri: RelativePath,
  duration_s: Type.Number({ exclusiveMinimum: 0, maximum: 600 }),
  bytes: Type.Integer({ minimum: 0 }),
});

export const PackagedRenditionSchema = Type.Object({
  name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$' }),
  width: Type.Integer({ minimum: 1, maximum: 16384 }),
  height: Type.Integer({ minimum: 1, maximum: 16384 }),
  bandwidth: Type.Integer({ minimum: 1, description: 'Peak bits per second' }),
  average_bandwidth: Type.Integer({ minimum: 1 }),
  // Quoted in EXT-X-STREAM-INF: no quote, comma-separated codec names.
  codecs: Type.String({ maxLength: 200, pattern: '^[A-Za-z0-9.,_ -]+$' }),
  playlist: RelativePath,
  init: RelativePath,
  segments: Type.Array(PackagedSegmentSchema, { minItems: 1, maxItems: 200_000 }),
});

export const PackagedManifestSchema = Type.Object({
  version: Type.Literal(1),
  duration_s: Type.Number({ exclusiveMinimum: 0 }),
  segment_s: Type.Number({ exclusiveMinimum: 0 }),
  poster: Type.Optional(RelativePath),
  renditions: Type.Array(PackagedRenditionSchema, { minItems: 1, maxItems: 16 }),
});

export type PackagedSegment = Static<typeof PackagedSegmentSchema>;
export type PackagedRendition = Static<typeof PackagedRenditionSchema>;
export type PackagedManifest = Static<typeof PackagedManifestSchema>;

/** Parses `manifest.json` text; throws with the first problem when it breaks the contract. */
export function parsePackagedManifest(text: string): PackagedManifest {
  const parsed: unknown = JSON.parse(text);
  if (!Value.Check(PackagedManifestSchema, parsed)) {
    const first = Value.Errors(PackagedManifestSchema, parsed).First();
    throw new Error(`manifest.json breaks the packaged layout at ${first?.path || '/'}: ${first?.message ?? 'invalid'}`);
  }
  const names = new Set(parsed.renditions.map((r) => r.name));
  if (names.size !== parsed.renditions.length) throw new Error('manifest.json names a rendition twice');
  return parsed;
}
