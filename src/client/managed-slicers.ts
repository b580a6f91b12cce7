import type {
  ManagedSlicerCollectionView,
  ManagedSlicerTaskCollectionView,
  ManagedSlicerTaskView,
  ManagedSlicerView,
  SlicerCreateBody,
  SlicerListQuery,
  SlicerUpdateBody,
  TaskListQuery,
} from '../modules/managed-slicers/managed-slicers.schema.js';
import { PlaylineApiError, type ClientCore } from './client.js';

/** One page of a list and the cursor of the next one (from the `Link: <...>; rel="next"` header). */
export interface Paged<T> {
  page: T;
  nextCursor: string | undefined;
}

const SLICERS = '/api/v4/managed-slicer/slicers';

/** Managed slicers: every change returns at once with the slicer and the task carrying it out. */
export class ManagedSlicerApi {
  constructor(private readonly core: ClientCore) {}

  create(body: SlicerCreateBody): Promise<ManagedSlicerView> {
    return this.core.request<ManagedSlicerView>('POST', SLICERS, { body });
  }

  get(id: string): Promise<ManagedSlicerView> {
    return this.core.request<ManagedSlicerView>('GET', `${SLICERS}/${encodeURIComponent(id)}`);
  }

  update(id: string, patch: SlicerUpdateBody): Promise<ManagedSlicerView> {
    return this.core.request<ManagedSlicerView>('PATCH', `${SLICERS}/${encodeURIComponent(id)}`, { body: patch });
  }

  restart(id: string): Promise<ManagedSlicerView> {
    return this.core.request<ManagedSlicerView>('GET', `${SLICERS}/restart/${encodeURIComponent(id)}`);
  }

  /**
   * Replaces the slicer's stream key: the answer's `ingest_url` carries the new one, and its
   * RESTART task restarts the slicer with it (an encoder using the old key is disconnected).
   */
  rotateStreamKey(id: string): Promise<ManagedSlicerView> {
    return this.core.request<ManagedSlicerView>('POST', `${SLICERS}/${encodeURIComponent(id)}/rotate-stream-key`);
  }

  delete(id: string): Promise<ManagedSlicerView> {
    return this.core.request<ManagedSlicerView>('DELETE', `${SLICERS}/${encodeURIComponent(id)}`);
  }

  list(query: SlicerListQuery = {}): Promise<Paged<ManagedSlicerCollectionView>> {
    return this.paged<ManagedSlicerCollectionView>(SLICERS, { ...query });
  }

  getTask(id: string): Promise<ManagedSlicerTaskView> {
    return this.core.request<ManagedSlicerTaskView>('GET', `${SLICERS}/tasks/${encodeURIComponent(id)}`);
  }

  /** Without `limit`, every task (matching the filters) in one answer, newest first; with it, a page and the next cursor. */
  listTasks(query: TaskListQuery = {}): Promise<Paged<ManagedSlicerTaskCollectionView>> {
    return this.paged<ManagedSlicerTaskCollectionView>(`${SLICERS}/tasks`, { ...query });
  }

  /** Every task matching the filters, newest first, following the cursors page by page (`limit` sets the page size). */
  async *allTasks(query: Omit<TaskListQuery, 'cursor'> = {}): AsyncGenerator<ManagedSlicerTaskView> {
    let cursor: string | undefined;
    do {
      const { page, nextCursor } = await this.listTasks({ ...query, ...(cursor ? { cursor } : {}) });
      yield* page.items;
      cursor = nextCursor;
    } while (cursor);
  }

  private async paged<T>(path: string, query: Record<string, string | number | undefined>): Promise<Paged<T>> {
    const response = await this.core.send('GET', path, { query });
    if (response.status !== 200) {
      const problem = parseJson(response.body) as { code?: string; detail?: string } | undefined;
      throw new PlaylineApiError(response.status, problem?.code ?? 'http_error', problem?.detail ?? response.body.slice(0, 200), problem);
    }
    const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.link ?? '')?.[1];
    const nextCursor = next ? (new URLSearchParams(next.split('?')[1] ?? '').get('cursor') ?? undefined) : undefined;
    return { page: JSON.parse(response.body) as T, nextCursor };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
