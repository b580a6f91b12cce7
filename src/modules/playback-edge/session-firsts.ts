import { LRUCache } from 'lru-cache';

/** The moments of a session the edge reports once: its first variant playlist, content segment, ad segment. */
export type SessionFirst = 'manifest' | 'start' | 'ad';

const BIT: Record<SessionFirst, number> = { manifest: 1, start: 2, ad: 4 };

/**
 * Which sessions already reached which mark on this instance, for the most recent sessions
 * (least recently active forgotten first): a forgotten session reaching a mark again emits its
 * event again, and the statistics store counts a session once per kind anyway (as it does for
 * the same session served by two instances).
 */
export class SessionFirsts {
  private readonly seen: LRUCache<string, number>;

  constructor(capacity = 100_000) {
    this.seen = new LRUCache({ max: capacity });
  }

  /** True the first time `session` of `owner` reaches `mark` here. */
  first(owner: string, session: string, mark: SessionFirst): boolean {
    const key = `${owner}\u0000${session}`;
    const marks = this.seen.get(key) ?? 0;
    if (marks & BIT[mark]) return false;
    this.seen.set(key, marks | BIT[mark]);
    return true;
  }

  /** Whether `session` of `owner` reached `mark` here already (marks nothing). */
  reached(owner: string, session: string, mark: SessionFirst): boolean {
    return ((this.seen.peek(`${owner}\u0000${session}`) ?? 0) & BIT[mark]) !== 0;
  }

  get size(): number {
    return this.seen.size;
  }
}
