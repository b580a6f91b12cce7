import type { PlaylineClient } from '../../../client/index.js';
import type { App } from '../../../platform/http/types.js';
import type { LiveLibrary, LiveWindow } from '../live-library.js';

export type PlaybackClient = Pick<PlaylineClient, 'playback'>;

const INDEX = '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360\nmedia_360p.m3u8\n';

/** Live windows held in memory (no slicer, no files): a live event that is live at once. */
export class MemoryLiveLibrary implements LiveLibrary {
  private readonly windows = new Map<string, LiveWindow>();

  put(owner: string, slicerId: string): void {
    this.windows.set(`${owner}/${slicerId}`, { owner, slicerId, dir: this.dirOf(owner, slicerId), index: INDEX });
  }

  find(owner: string, slicerId: string): Promise<LiveWindow | undefined> {
    return Promise.resolve(this.windows.get(`${owner}/${slicerId}`));
  }

  playlist(owner: string, slicerId: string): Promise<string | undefined> {
    return Promise.resolve(this.windows.has(`${owner}/${slicerId}`) ? '#EXTM3U\n#EXT-X-TARGETDURATION:2\n' : undefined);
  }

  dirOf(owner: string, slicerId: string): string {
    return `/nonexistent/live/${owner}/${slicerId}`;
  }
}

/** Requests a playback URL signed by `client`'s workspace (with `coid` when given): status, playback error code, detail. */
export async function playbackOf(
  t: { app: App },
  client: PlaybackClient,
  contentId: string,
  o: { kind?: 'asset' | 'event'; coid?: string; ttlS?: number } = {},
): Promise<{ status: number; code: string | undefined; detail: string; body: string }> {
  const url = client.playback.url(contentId, { kind: o.kind ?? 'asset', ...(o.ttlS !== undefined ? { ttlS: o.ttlS } : {}), ...(o.coid !== undefined ? { params: [['coid', o.coid]] } : {}) });
  const response = await t.app.inject({ method: 'GET', url });
  const code = response.headers['x-playback-error-code'];
  const detail = code === undefined ? '' : String((JSON.parse(response.body) as { detail?: unknown }).detail ?? '');
  return { status: response.statusCode, code: code === undefined ? undefined : String(code), detail, body: response.body };
}

/** The first variant playlist's path under the session a multivariant playlist opened: `/play/s/<token>/v/<rendition>.m3u8`. */
export function sessionVariantOf(multivariant: string): string {
  const found = /(?:^|\/)s\/([^/\s]+)\/v\/([^/\s]+\.m3u8)$/m.exec(multivariant);
  if (!found) throw new Error(`no session variant in ${multivariant.slice(0, 300)}`);
  return `/play/s/${found[1] as string}/v/${found[2] as string}`;
}
