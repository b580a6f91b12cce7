/**
 * The platform's v4 signature, computed in the browser:
 * msg = base64(zlib(JSON {"_owner","_timestamp"})), sig = lowercase hex HMAC-SHA256(key, msg).
 * `CompressionStream('deflate')` produces the zlib format (RFC 1950) the server inflates;
 * 'deflate-raw' would not verify.
 */

export interface V4Pair {
  msg: string;
  sig: string;
}

const encoder = new TextEncoder();

async function zlib(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const base64 = (bytes: Uint8Array): string => {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
};

const hex = (buffer: ArrayBuffer): string =>
  Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');

/** WebCrypto exists only in a secure context (https, or http on localhost/127.0.0.1). */
export const canSign = (): boolean => typeof crypto !== 'undefined' && crypto.subtle !== undefined && typeof CompressionStream === 'function';

/**
 * Signs for one workspace and key. The pair of a given second is reused, so a page that polls
 * several endpoints signs once a second at most (and the server recalls the pair it verified).
 */
export class V4Signer {
  private hmacKey: Promise<CryptoKey> | undefined;
  private last: { second: number; pair: Promise<V4Pair> } | undefined;

  constructor(
    readonly owner: string,
    private readonly apiKey: string,
  ) {}

  /** Whether the signing key's secret starts with `prefix` (a key list shows prefixes only). */
  keyStartsWith(prefix: string): boolean {
    return prefix.length > 0 && this.apiKey.startsWith(prefix);
  }

  sign(unixSeconds: number): Promise<V4Pair> {
    if (this.last?.second === unixSeconds) return this.last.pair;
    const pair = this.compute(unixSeconds);
    this.last = { second: unixSeconds, pair };
    pair.catch(() => (this.last = undefined));
    return pair;
  }

  /**
   * The `sig` of a playback URL: lowercase hex HMAC-SHA256 of the query text before `&sig=`,
   * under the same API key (the way `playline sign-playback` signs).
   */
  async signPlayback(query: string): Promise<string> {
    this.hmacKey ??= crypto.subtle.importKey('raw', encoder.encode(this.apiKey), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    return hex(await crypto.subtle.sign('HMAC', await this.hmacKey, encoder.encode(query)));
  }

  private async compute(unixSeconds: number): Promise<V4Pair> {
    this.hmacKey ??= crypto.subtle.importKey('raw', encoder.encode(this.apiKey), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const msg = base64(await zlib(JSON.stringify({ _owner: this.owner, _timestamp: unixSeconds })));
    const sig = hex(await crypto.subtle.sign('HMAC', await this.hmacKey, encoder.encode(msg)));
    return { msg, sig };
  }
}
