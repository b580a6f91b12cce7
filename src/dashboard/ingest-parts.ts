/**
 * An ingest URL split the way encoders ask for it (OBS: "Server" and "Stream Key"), with the key
 * also masked inside the whole URL so a table can show where to send without showing the secret.
 * The forms are the ones the managed-slicer API documents for `ingest_url`.
 */
export interface IngestParts {
  /** What an encoder's "server" field takes: the URL without the key. */
  server: string;
  /** The stream key (SRT passphrase, RIST secret, RTMP stream name, hls-push path key), or null when the URL carries none. */
  key: string | null;
  /** The whole URL with the key replaced by a mask. */
  masked: string;
}

export const KEY_MASK = '••••••••';

const withoutQuery = (url: string): string => url.replace(/\?.*$/, '');

export function ingestParts(protocol: string, url: string): IngestParts {
  if (protocol === 'rtmp') {
    const match = /^(rtmps?:\/\/[^/]+\/[^/]+)\/([^/?#]+)$/.exec(url);
    if (match) return { server: match[1] as string, key: match[2] as string, masked: `${match[1] as string}/${KEY_MASK}` };
  }
  if (protocol === 'srt' || protocol === 'rist') {
    const param = protocol === 'srt' ? 'passphrase' : 'secret';
    const match = new RegExp(`([?&]${param}=)([^&#]*)`).exec(url);
    if (match) {
      const key = decodeURIComponent(match[2] as string);
      return { server: withoutQuery(url), key, masked: url.replace(match[0], `${match[1] as string}${KEY_MASK}`) };
    }
  }
  if (protocol === 'hls') {
    // …/ingest/hls/<workspace>/<slicer id>/<key>/index.m3u8
    const match = /^(.*\/ingest\/hls\/[^/]+\/[^/]+\/)([^/]+)(\/index\.m3u8)$/.exec(url);
    if (match) return { server: `${match[1] as string}`, key: match[2] as string, masked: `${match[1] as string}${KEY_MASK}${match[3] as string}` };
  }
  return { server: url, key: null, masked: url };
}
