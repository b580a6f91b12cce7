import { createHmac } from 'node:crypto';

/** What a playback URL plays: an asset (`/play/<asset_id>.m3u8`, `ct=a`) or a live event (`/play/event/<event_id>.m3u8`, `ct=e`). */
export type ContentKind = 'asset' | 'event';

export const contentTypeOf: Record<ContentKind, string> = { asset: 'a', event: 'e' };

/** The token version this edge understands (`tc`). */
export const TOKEN_VERSION = '1';

/**
 * A playback query as received: the decoded parameters (first value of each; repeats are
 * noted), the exact text the signature covers, and the signature.
 */
export interface PlaybackQuery {
  params: Map<string, string>;
  /** Names given more than once. */
  repeated: string[];
  /** The raw query text before `&sig=` (what the signer HMACs), or null when there is no sig. */
  signedText: string | null;
  /** The sig value (raw), or null when the query has no sig parameter. */
  sig: string | null;
  /** True when anything follows the sig parameter (sig must come last). */
  trailingAfterSig: boolean;
}

const decode = (value: string): string => {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return value;
  }
};

/** Splits the raw query text of a playback URL (without the leading `?`). */
export function parsePlaybackQuery(raw: string): PlaybackQuery {
  let signedText: string | null = null;
  let sig: string | null = null;
  let trailingAfterSig = false;
  let paramText = raw;
  const at = raw.startsWith('sig=') ? 0 : raw.indexOf('&sig=');
  if (at >= 0) {
    signedText = raw.slice(0, at);
    const rest = raw.slice(at === 0 ? 4 : at + 5);
    const amp = rest.indexOf('&');
    trailingAfterSig = amp >= 0;
    sig = amp >= 0 ? rest.slice(0, amp) : rest;
    paramText = signedText;
  }
  const params = new Map<string, string>();
  const repeated: string[] = [];
  if (paramText.length > 0) {
    for (const pair of paramText.split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      const name = decode(eq >= 0 ? pair.slice(0, eq) : pair);
      const value = eq >= 0 ? decode(pair.slice(eq + 1)) : '';
      if (params.has(name)) repeated.push(name);
      else params.set(name, value);
    }
  }
  return { params, repeated, signedText, sig, trailingAfterSig };
}

/** Lowercase hex HMAC-SHA256 of the query text before `&sig=`, keyed by the key's UTF-8 bytes. */
export function playbackSignature(key: Buffer | string, signedText: string): string {
  return createHmac('sha256', key).update(signedText, 'utf8').digest('hex');
}

export interface PlaybackUrlInput {
  /** Where the edge is, e.g. `http://127.0.0.1:8080` (no trailing path). */
  baseUrl: string;
  kind: ContentKind;
  contentId: string;
  owner: string;
  /** The signing key: an API key of the owner, or the named application key's secret. */
  key: string;
  /** Unix seconds after which the URL is refused (104). */
  expiresAt: number;
  /** Random nonce (`rn`); default: 16 random hex characters from `nonce()`. */
  nonce?: string;
  /** Further parameters in order (ad, pbs, hlsver, kid, kv, ...), all signed. */
  params?: ReadonlyArray<readonly [string, string]>;
}

const encode = (value: string) => encodeURIComponent(value);

/** The query of a playback URL without its signature, in the edge's canonical order. */
export function unsignedPlaybackQuery(input: Omit<PlaybackUrlInput, 'baseUrl' | 'key'> & { nonce: string }): string {
  const pairs: Array<readonly [string, string]> = [
    ['tc', TOKEN_VERSION],
    ['exp', String(input.expiresAt)],
    ['rn', input.nonce],
    ['ct', contentTypeOf[input.kind]],
    ['cid', input.contentId],
    ['oid', input.owner],
    ...(input.params ?? []),
  ];
  return pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
}

/** The path of a playback manifest: `/play/<id>.m3u8` or `/play/event/<id>.m3u8`. */
export const playbackPath = (kind: ContentKind, contentId: string): string =>
  kind === 'asset' ? `/play/${encode(contentId)}.m3u8` : `/play/event/${encode(contentId)}.m3u8`;

/** A signed playback URL: `sig` (hex HMAC-SHA256 of the query before it) appended last. */
export function signPlaybackUrl(input: PlaybackUrlInput, nonce: () => string): string {
  const query = unsignedPlaybackQuery({ ...input, nonce: input.nonce ?? nonce() });
  const base = input.baseUrl.replace(/\/+$/, '');
  return `${base}${playbackPath(input.kind, input.contentId)}?${query}&sig=${playbackSignature(input.key, query)}`;
}
