import { playbackPath, playbackSignature, type ContentKind } from '../client/index.js';

/** What the simulator creates in each owner's catalogue so that every error code can be produced. */
export const SIM = {
  adReady: 'sim-ads',
  adDraft: 'sim-draft',
  adSlow: 'sim-slow',
  drmOk: 'sim-widevine',
  drmRejected: 'sim-bad-policy',
  appKey: 'sim-app',
  privateAsset: 'sim-private',
} as const;

/** One simulated viewer's context: whose URL, which asset, and the secrets it may sign with. */
export interface SimulatedViewer {
  owner: string;
  apiKey: string;
  /** The secret of the owner's `sim-app` application key (version 1). */
  appKeySecret: string;
  /** Another workspace keeping `sim-private` private (not shared with `owner`); null when there is none. */
  contentOwner: string | null;
  assetId: string;
  /** Unix seconds now. */
  nowS: number;
  nonce: string;
  /** A fresh playback session id. */
  session: string;
}

type Pairs = Array<[string, string]>;

interface UrlSpec {
  kind?: ContentKind;
  contentId?: string;
  /** Replaces base parameters by name (`null` leaves one out). */
  base?: Record<string, string | null>;
  extra?: Pairs;
  key?: string;
  sig?: 'good' | 'none' | 'empty' | 'wrong';
  extension?: string;
  /** Leave out the session id (pbs). */
  noSession?: boolean;
}

/** Builds a playback URL path for a viewer with deliberate changes. */
export function simulatedUrl(v: SimulatedViewer, spec: UrlSpec = {}): string {
  const kind = spec.kind ?? 'asset';
  const contentId = spec.contentId ?? v.assetId;
  const base: Record<string, string> = { tc: '1', exp: String(v.nowS + 3600), rn: v.nonce, ct: kind === 'asset' ? 'a' : 'e', cid: contentId, oid: v.owner };
  const pairs: Pairs = [];
  for (const [name, value] of Object.entries(base)) {
    const changed = spec.base?.[name];
    if (changed === null) continue;
    pairs.push([name, changed ?? value]);
  }
  if (!spec.noSession) pairs.push(['pbs', v.session]);
  pairs.push(...(spec.extra ?? []));
  const query = pairs.map(([k, val]) => `${encodeURIComponent(k)}=${encodeURIComponent(val)}`).join('&');
  let path = playbackPath(kind, contentId);
  if (spec.extension) path = path.replace(/\.m3u8$/, `.${spec.extension}`);
  const sig = spec.sig ?? 'good';
  if (sig === 'none') return `${path}?${query}`;
  const value = sig === 'empty' ? '' : playbackSignature(sig === 'wrong' ? `${v.apiKey}-wrong` : spec.key ?? v.apiKey, query);
  return `${path}?${query}&sig=${value}`;
}

/**
 * For each playback error code, the requests a viewer sends to meet it: the last one fails
 * with that code; any before it are valid playbacks (a session or DRM URL used twice).
 */
export const badSessions: Record<number, (v: SimulatedViewer) => string[]> = {
  100: (v) => [simulatedUrl(v, { extra: [['dur', 'forever']] })],
  101: (v) => [simulatedUrl(v, { base: { exp: 'tomorrow' } })],
  102: (v) => [simulatedUrl(v, { contentId: SIM.privateAsset, extra: [['coid', v.contentOwner ?? '']] })],
  103: (v) => [simulatedUrl(v, { base: { rn: null } })],
  104: (v) => [simulatedUrl(v, { base: { exp: String(v.nowS - 60) } })],
  105: (v) => [simulatedUrl(v, { base: { ct: 'e' } })],
  106: (v) => [simulatedUrl(v, { kind: 'event', base: { ct: 'a' } })],
  107: (v) => [simulatedUrl(v, { base: { cid: `${v.assetId}-other` } })],
  108: (v) => [simulatedUrl(v, { sig: 'none' })],
  109: (v) => [simulatedUrl(v, { extra: [['extsid', `ext-${v.nonce}`]], sig: 'wrong' })],
  110: (v) => [simulatedUrl(v, { sig: 'wrong' })],
  111: (v) => [simulatedUrl(v, { extra: [['ip', '192.0.2.1']] })],
  112: (v) => {
    const url = simulatedUrl(v, { extra: [['drm', SIM.drmOk]], noSession: true });
    return [url, url];
  },
  113: (v) => [simulatedUrl(v, { base: { tc: '2' } })],
  114: (v) => [simulatedUrl(v, { extra: [['drm', SIM.drmRejected]] })],
  115: (v) => [simulatedUrl(v, { extra: [['ts', 'soon']] })],
  116: (v) => [simulatedUrl(v, { extra: [['delay', 'a bit']] })],
  117: (v) => [simulatedUrl(v, { extra: [['minDur', '-1']] })],
  118: (v) => [simulatedUrl(v, { extra: [['targetDur', '6s']] })],
  119: (v) => [simulatedUrl(v, { extra: [['kid', 'sim-unknown-key']] })],
  120: (v) => [simulatedUrl(v, { extra: [['kid', SIM.appKey], ['kv', '99']], key: v.appKeySecret })],
  121: (v) => [simulatedUrl(v, { extra: [['ad', 'sim-unknown-ads']] })],
  122: (v) => [simulatedUrl(v, { extra: [['ad', SIM.adDraft]] })],
  123: (v) => [simulatedUrl(v, { extra: [['stopOffset', 'end']] })],
  124: (v) => [simulatedUrl(v, { extra: [['sliceStart', '1.5']] })],
  125: (v) => [simulatedUrl(v, { extra: [['sliceStop', '-3']] })],
  126: (v) => [simulatedUrl(v, { extra: [['startseg', 'first']] })],
  127: (v) => [simulatedUrl(v), simulatedUrl({ ...v, nonce: `${v.nonce}b` })],
  128: (v) => [simulatedUrl({ ...v, session: 'bad session!' })],
  129: (v) => [simulatedUrl(v, { extra: [['hlsver', '3.0']] })],
  130: (v) => [simulatedUrl(v, { extra: [['ad', SIM.adSlow]] })],
  999: (v) => [simulatedUrl(v, { extension: 'mpd' })],
};

/** A valid session's URL, with the ready ad configuration when `withAd`. */
export const goodSession = (v: SimulatedViewer, withAd: boolean): string =>
  simulatedUrl(v, withAd ? { extra: [['ad', SIM.adReady]] } : {});
