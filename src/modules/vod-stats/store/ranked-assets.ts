/** What the ranking reads from an asset: the key it was indexed under, frozen until re-indexed. */
export interface Rankable {
  /** Unique and fixed per asset (creation order): the last tie-break, a number so no string compares. */
  readonly seq: number;
  rankNew: number;
  rankTs: number;
}

/**
 * One sorted run. The keys sit in their own number arrays (stored unboxed and contiguous), so a
 * binary search reads a few cache lines instead of chasing a pointer to a random asset per step.
 */
interface Chunk<T> {
  items: T[];
  news: number[];
  tss: number[];
  seqs: number[];
}

const MAX_CHUNK = 64;

/**
 * True when key (cn, ct, cs) ranks before (n, ts, seq): most new sessions first, then most
 * recent ts, then the older asset (so the order is total and every key has one place).
 */
const keyBefore = (cn: number, ct: number, cs: number, n: number, ts: number, seq: number): boolean =>
  cn !== n ? cn > n : ct !== ts ? ct > ts : cs < seq;

/** First index of `c` whose entry does not rank before the key. */
const lowerBound = <T extends Rankable>(c: Chunk<T>, n: number, ts: number, seq: number): number => {
  let lo = 0;
  let hi = c.items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyBefore(c.news[mid] as number, c.tss[mid] as number, c.seqs[mid] as number, n, ts, seq)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

const chunkOf = <T extends Rankable>(items: T[]): Chunk<T> => ({
  items,
  news: items.map((i) => i.rankNew),
  tss: items.map((i) => i.rankTs),
  seqs: items.map((i) => i.seq),
});

/**
 * The assets of one workspace in "all assets" order, kept incrementally: a list of sorted
 * chunks (a one-level B-tree), so insert and remove cost two binary searches plus a shift of at
 * most 64 slots, and reading the top N walks the first chunk. No sort per query.
 */
export class RankedAssets<T extends Rankable> {
  private chunks: Chunk<T>[] = [];
  /** The key of each chunk's last entry, contiguous too: the chunk search reads only these. */
  private lastNews: number[] = [];
  private lastTss: number[] = [];
  private lastSeqs: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The chunk that holds (or would hold) the key: the first whose last entry does not rank before it. */
  private chunkFor(n: number, ts: number, seq: number): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keyBefore(this.lastNews[mid] as number, this.lastTss[mid] as number, this.lastSeqs[mid] as number, n, ts, seq)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private refreshLast(at: number): void {
    const c = this.chunks[at] as Chunk<T>;
    const last = c.items.length - 1;
    this.lastNews[at] = c.news[last] as number;
    this.lastTss[at] = c.tss[last] as number;
    this.lastSeqs[at] = c.seqs[last] as number;
  }

  /** Replaces the content with `items` (any order) in one sort: for loading a snapshot. */
  rebuild(items: T[]): void {
    items.sort((a, b) => b.rankNew - a.rankNew || b.rankTs - a.rankTs || a.seq - b.seq);
    this.chunks = [];
    const size = MAX_CHUNK >>> 1;
    for (let i = 0; i < items.length; i += size) this.chunks.push(chunkOf(items.slice(i, i + size)));
    this.lastNews = this.chunks.map((c) => c.news[c.news.length - 1] as number);
    this.lastTss = this.chunks.map((c) => c.tss[c.tss.length - 1] as number);
    this.lastSeqs = this.chunks.map((c) => c.seqs[c.seqs.length - 1] as number);
    this.count = items.length;
  }

  /** Adds `item` under its current rankNew/rankTs. */
  insert(item: T): void {
    this.count++;
    const n = item.rankNew;
    const ts = item.rankTs;
    if (this.chunks.length === 0) {
      this.chunks.push(chunkOf([item]));
      this.lastNews.push(n);
      this.lastTss.push(ts);
      this.lastSeqs.push(item.seq);
      return;
    }
    const seq = item.seq;
    const at = this.chunkFor(n, ts, seq);
    const c = this.chunks[at] as Chunk<T>;
    const pos = lowerBound(c, n, ts, seq);
    // A manual shift beats splice() for a few dozen slots.
    for (let i = c.items.length; i > pos; i--) {
      c.items[i] = c.items[i - 1] as T;
      c.news[i] = c.news[i - 1] as number;
      c.tss[i] = c.tss[i - 1] as number;
      c.seqs[i] = c.seqs[i - 1] as number;
    }
    c.items[pos] = item;
    c.news[pos] = n;
    c.tss[pos] = ts;
    c.seqs[pos] = seq;
    if (c.items.length > MAX_CHUNK) {
      const half = MAX_CHUNK >>> 1;
      this.chunks.splice(at + 1, 0, { items: c.items.splice(half), news: c.news.splice(half), tss: c.tss.splice(half), seqs: c.seqs.splice(half) });
      this.lastNews.splice(at + 1, 0, 0);
      this.lastTss.splice(at + 1, 0, 0);
      this.lastSeqs.splice(at + 1, 0, 0);
      this.refreshLast(at + 1);
      this.refreshLast(at);
    } else if (pos === c.items.length - 1) {
      this.refreshLast(at);
    }
  }

  /** Removes `item`, which must still carry the rankNew/rankTs it was inserted with. */
  remove(item: T): boolean {
    if (this.chunks.length === 0) return false;
    const at = this.chunkFor(item.rankNew, item.rankTs, item.seq);
    const c = this.chunks[at] as Chunk<T>;
    const pos = lowerBound(c, item.rankNew, item.rankTs, item.seq);
    if (c.items[pos] !== item) return false;
    const last = c.items.length - 1;
    for (let i = pos; i < last; i++) {
      c.items[i] = c.items[i + 1] as T;
      c.news[i] = c.news[i + 1] as number;
      c.tss[i] = c.tss[i + 1] as number;
      c.seqs[i] = c.seqs[i + 1] as number;
    }
    c.items.pop();
    c.news.pop();
    c.tss.pop();
    c.seqs.pop();
    this.count--;
    if (last === 0) {
      this.chunks.splice(at, 1);
      this.lastNews.splice(at, 1);
      this.lastTss.splice(at, 1);
      this.lastSeqs.splice(at, 1);
    } else if (pos === last) {
      this.refreshLast(at);
    }
    return true;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (const c of this.chunks) yield* c.items;
  }
}
