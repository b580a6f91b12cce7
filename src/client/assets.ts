import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type { AssetCollectionView, AssetDeletedView, AssetListQuery, AssetUpdateBody, AssetView } from '../modules/assets/assets.schema.js';
import { PlaylineApiError, type ClientCore } from './client.js';

const ASSETS = '/api/v4/assets';

export interface UploadOptions {
  /** Default: the file's name when uploading a path. */
  title?: string;
  /** Default `application/octet-stream` (the server finds the format itself). */
  contentType?: string;
  /** Bytes sent so far, and the total when known (a path), as the body is read. */
  onProgress?: (sentBytes: number, totalBytes: number | undefined) => void;
  /** Stops the upload at once (the request is aborted; the server removes the partial file). */
  signal?: AbortSignal;
}

export interface WaitOptions {
  /** Time between two looks. Default 1 s. */
  intervalMs?: number;
  /** Each look at the asset while it is packaged. */
  onProgress?: (asset: AssetView) => void;
  signal?: AbortSignal;
  /**
   * `ready` (default): until packaged whole. `playable`: until it can be played, which is while it
   * is still packaged (`playable`) or, for a short one, once `ready`. Either way `failed` ends the wait.
   */
  until?: 'ready' | 'playable';
}

/** One page of the list and the cursor of the next one (from the `Link: <...>; rel="next"` header). */
export interface AssetPage {
  page: AssetCollectionView;
  nextCursor: string | undefined;
}

/** The asset library: upload media, follow its packaging, list, rename, delete. */
export class AssetApi {
  constructor(private readonly core: ClientCore) {}

  /**
   * Uploads a media file (a path, or any readable stream) as a new asset. The body is streamed,
   * never held whole in memory. Resolves with the asset (`uploaded` or `processing`; it plays from `playable` on, see `waitUntilPackaged`).
   */
  async upload(source: string | Readable, options: UploadOptions = {}): Promise<AssetView> {
    const fromPath = typeof source === 'string';
    const total = fromPath ? (await stat(source)).size : undefined;
    const input = fromPath ? createReadStream(source) : source;
    let sent = 0;
    const counted = input.pipe(
      new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          sent += chunk.length;
          options.onProgress?.(sent, total);
          callback(null, chunk);
        },
      }),
    );
    input.once('error', (err: Error) => counted.destroy(err));
    const title = options.title ?? (fromPath ? basename(source).slice(0, 200) : undefined);
    return this.core.request<AssetView>('POST', ASSETS, {
      body: counted,
      contentType: options.contentType ?? 'application/octet-stream',
      ...(title !== undefined && title.trim() !== '' ? { query: { title } } : {}),
      ...(total !== undefined ? { headers: { 'content-length': String(total) } } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  get(id: string): Promise<AssetView> {
    return this.core.request<AssetView>('GET', `${ASSETS}/${encodeURIComponent(id)}`);
  }

  update(id: string, patch: AssetUpdateBody): Promise<AssetView> {
    return this.core.request<AssetView>('PATCH', `${ASSETS}/${encodeURIComponent(id)}`, { body: patch });
  }

  /** Packages a failed asset again from its kept upload (202: the asset, queued). */
  retry(id: string): Promise<AssetView> {
    return this.core.request<AssetView>('POST', `${ASSETS}/${encodeURIComponent(id)}/retry`);
  }

  delete(id: string): Promise<AssetDeletedView> {
    return this.core.request<AssetDeletedView>('DELETE', `${ASSETS}/${encodeURIComponent(id)}`);
  }

  /** Newest first; `limit` sets the page size, `cursor` (from the previous page) the start. */
  async list(query: AssetListQuery = {}): Promise<AssetPage> {
    const response = await this.core.send('GET', ASSETS, { query: { ...query } });
    const parsed = parseJson(response.body);
    if (response.status !== 200) {
      const problem = parsed as { code?: string; detail?: string } | undefined;
      throw new PlaylineApiError(response.status, problem?.code ?? 'http_error', problem?.detail ?? response.body.slice(0, 200), parsed);
    }
    const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.link ?? '')?.[1];
    const nextCursor = next ? (new URLSearchParams(next.split('?')[1] ?? '').get('cursor') ?? undefined) : undefined;
    return { page: parsed as AssetCollectionView, nextCursor };
  }

  /** Looks at the asset until its packaging ended (`ready` or `failed`; with `until: 'playable'`, also `playable`) and resolves with it. */
  async waitUntilPackaged(id: string, options: WaitOptions = {}): Promise<AssetView> {
    for (;;) {
      const asset = await this.get(id);
      if (asset.state === 'ready' || asset.state === 'failed') return asset;
      if (asset.state === 'playable' && options.until === 'playable') return asset;
      options.onProgress?.(asset);
      await delay(options.intervalMs ?? 1000, undefined, options.signal ? { signal: options.signal } : {});
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
