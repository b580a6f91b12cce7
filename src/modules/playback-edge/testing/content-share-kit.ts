import type { PlaylineClient } from '../../../client/index.js';
import type { App } from '../../../platform/http/types.js';
import { liveWindowOf } from '../../../platform/media/live-window.test-support.js';
import type { LiveLibrary, LiveWindow } from '../live-library.js';

export type PlaybackClient = Pick<PlaylineClient, 'playback'>;

/** Live windows held in memory (no slicer, no files): a live event that is live at once. */
export class MemoryLiveLibrary implements LiveLibrary {
  private readonly windows = new Map<string, LiveWindow>();

  put(owner: string, slicerId: string): void {
    this.windows.set(`${owner}/${slicerId}`, { owner, slicerId, dir: this.dirOf(owner, slicerId), state: liveWindowOf({ msn: 1, complete: 1, open: 0, name: '360p' }) });
  }

  find(owner: string, slicerId: string): Promise<LiveWindow | undefined> {
    return Promise.resolve(this.windows.get(`${owner}/${slicerId}`));
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
