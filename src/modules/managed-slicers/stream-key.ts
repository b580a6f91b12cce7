import { randomBytes } from 'node:crypto';
import { LIVE_INDEX_FILE } from '../../platform/media/media-layout.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { IngestProtocol } from './managed-slicers.schema.js';
import type { SealedStreamKey, SlicerRecord, StreamKeyStore } from './slicer-store.js';

/** What a stream key looks like: URL-safe base64, so it goes into every ingest URL unescaped. */
export const STREAM_KEY_PATTERN = /^[A-Za-z0-9_-]{32}$/;

/**
 * A new stream key: 24 random bytes (192 bits) as 32 characters of URL-safe base64. SRT takes
 * passphrases of 10 to 79 characters; RIST secrets, RTMP stream names and URL path segments take
 * these characters as they are.
 */
export function newStreamKey(): string {
  return randomBytes(24).toString('base64url');
}

const protocolOfScheme: Readonly<Record<string, IngestProtocol>> = { srt: 'srt', rist: 'rist', zixi: 'zixi', rtmp: 'rtmp', rtmps: 'rtmp', http: 'hls', https: 'hls' };

/** The protocol an ingest URL was made for, by its scheme; undefined for a scheme no provisioner makes. */
function protocolOfUrl(url: string): IngestProtocol | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  return scheme !== undefined && Object.hasOwn(protocolOfScheme, scheme) ? protocolOfScheme[scheme] : undefined;
}

const withQuery = (url: string, query: string): string => `${url}${url.includes('?') ? '&' : '?'}${query}`;

/** `rtmp://host:port/<app>/<key>`: the key is the stream name. A legacy URL's stream name (the slicer id) is replaced. */
function rtmpWithKey(url: string, key: string): string {
  const slash = url.indexOf('/', url.indexOf('://') + 3);
  if (slash < 0) return `${url}/${key}`;
  const segments = url.slice(slash + 1).split('/').filter((s) => s !== '');
  const app = segments.length >= 2 ? segments.slice(0, -1) : segments;
  return [url.slice(0, slash), ...app, key].join('/');
}

/** `…/ingest/hls/<owner>/<slicer>/<key>/index.m3u8`. A legacy URL's token and playlist are dropped first. */
function hlsWithKey(url: string, key: string): string {
  const base = /^(.*?\/ingest\/hls\/[^/?#]+\/[^/?#]+)(?:\/.*)?$/.exec(url)?.[1] ?? url.replace(/\/+$/, '');
  return `${base}/${key}/${LIVE_INDEX_FILE}`;
}

/**
 * The URL an encoder sends the source to: the stored (keyless) ingest URL with the slicer's stream
 * key where its protocol checks it. SRT: the passphrase (AES-128, `pbkeylen=16`); RIST: the
 * secret (AES-128); RTMP: the stream name; hls push: a path segment. Zixi URLs are kept as they are
 * (no ffmpeg implementation to key). A stored URL of another protocol than `protocol` (an UPDATE
 * that changes the protocol has not completed yet) is composed for the protocol it was made for.
 */
export function ingestUrlWithKey(protocol: IngestProtocol, storedUrl: string | null, key: string): string | null {
  if (storedUrl === null) return null;
  switch (protocolOfUrl(storedUrl) ?? protocol) {
    case 'srt':
      return withQuery(storedUrl, `passphrase=${key}&pbkeylen=16`);
    case 'rist':
      return withQuery(storedUrl, `secret=${key}&aes-type=128`);
    case 'rtmp':
      return rtmpWithKey(storedUrl, key);
    case 'hls':
      return hlsWithKey(storedUrl, key);
    case 'zixi':
      return storedUrl;
  }
}

/** The part of the platform's SecretBox stream keys use. */
export type StreamKeySealer = Pick<SecretBox, 'seal' | 'open'>;

/**
 * Stream keys of managed slicers, the only ways they leave memory: sealed for storage, or in clear
 * for the owner's answers and the slicer's process. A slicer made before stream keys existed gets
 * one the first time one is needed (a migration cannot seal: it has no server key).
 */
export class SlicerStreamKeys {
  constructor(
    private readonly box: StreamKeySealer,
    private readonly store: StreamKeyStore,
  ) {}

  /** A new key, sealed for storage (a create, a rotation). */
  sealNew(): SealedStreamKey {
    return this.box.seal(newStreamKey()) as SealedStreamKey;
  }

  /** The key in clear of a slicer as read; undefined when the slicer is gone. */
  async keyOf(slicer: Pick<SlicerRecord, 'id' | 'sealedStreamKey'>): Promise<string | undefined> {
    const sealed = slicer.sealedStreamKey ?? (await this.store.fillStreamKey(slicer.id, this.sealNew()));
    return sealed === undefined ? undefined : this.box.open(sealed);
  }

  /** The key in clear of the slicer with this id, as stored now; undefined when the slicer is gone. */
  async keyOfSlicer(slicerId: string): Promise<string | undefined> {
    const sealed = await this.store.streamKeyOf(slicerId);
    return sealed === undefined ? undefined : this.keyOf({ id: slicerId, sealedStreamKey: sealed });
  }
}
