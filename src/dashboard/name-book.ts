import type { DashboardApi } from './api/client.js';

/** How often an id the book does not know may send it back to the server (ids of other kinds, deleted assets). */
const LOOK_AGAIN_MS = 30_000;

/**
 * Names for the ids statistics carry: an asset's title, a slicer's name (its live events are
 * played under the slicer id). Loaded on first use and again, at most every 30 s, when an id
 * turns up that the book does not know. A name it cannot find leaves the id shown.
 */
export class NameBook {
  private readonly names = new Map<string, string>();
  private loadedAt = -Infinity;
  private loading: Promise<void> | undefined;

  constructor(private readonly api: DashboardApi) {}

  /** The name of `id`, or undefined (not known, or untitled). */
  nameOf(id: string): string | undefined {
    return this.names.get(id);
  }

  /** Loads the names when one of `ids` is unknown and the last look is old enough; resolves once known. */
  async learn(ids: readonly string[]): Promise<boolean> {
    if (ids.every((id) => this.names.has(id)) || Date.now() - this.loadedAt < LOOK_AGAIN_MS) return false;
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    await this.loading;
    return true;
  }

  private async load(): Promise<void> {
    this.loadedAt = Date.now();
    const [assets, slicers] = await Promise.allSettled([this.api.assets(100), this.api.slicers()]);
    if (assets.status === 'fulfilled') for (const a of assets.value.page.items) if (a.title) this.names.set(a.id, a.title);
    if (slicers.status === 'fulfilled') for (const s of slicers.value.items) this.names.set(s.id, `${s.name} (live)`);
  }
}
