/**
 * Session dedupe marks of one asset, in bounded and collector-friendly memory.
 *
 * A session is known by a 53-bit hash of its id: two different sessions of one asset
 * share a hash with probability about n² / 2^54 for n sessions held (n = 10,000: ~6e-9), and
 * then the later one is counted as a duplicate of the earlier. `session-marks.test.ts` checks a
 * million distinct ids for collisions. Entries live in one packed number array, with an
 * open-addressing index once an asset holds more than a few sessions.
 */

/** "Not counted". Seconds are never negative. */
export const NONE = -1;

/** murmur3's 32-bit finaliser: every input bit reaches every output bit. */
const mix32 = (h: number): number => {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
};

/**
 * A 53-bit hash of a session id (exact in a double): two independent 32-bit multiplicative
 * hashes of the UTF-16 units (FNV-1a's prime and murmur2's multiplier, different seeds), each
 * finalised, the second cross-mixed with the first, 21 bits of it on top of the 32 of the first.
 */
export const sessionHash = (id: string): number => {
  let h1 = 0x811c9dc5;
  let h2 = 0x9747b28c ^ id.length;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  }
  const low = mix32(h1);
  const high = mix32(h2 ^ low);
  return (high & 0x1fffff) * 4294967296 + low;
};

const TWO_53 = 9007199254740992;
/** The key of one (session, error code) mark: the session hash moved by the code, still 53 bits. */
export const errorKey = (hash: number, code: number): number => (hash + code * 0x9e3779b1) % TWO_53;

/** Up to this many entries are found by scanning; past it an index is kept. */
const SCAN_LIMIT = 8;

/**
 * Marks keyed by a 53-bit number: `stride - 1` seconds per key (NONE when not set).
 * Sessions use stride 4 (manifest, ad, start); error marks stride 2 (the second of the code).
 */
export class MarkTable {
  /** [key, second, ...] per entry, `stride` numbers each. */
  entries: number[] = [];
  /** slot -> entry number + 1 (0 empty), linear probing; null while entries are few. */
  private index: Int32Array | null = null;

  constructor(readonly stride: number) {}

  get size(): number {
    return this.entries.length / this.stride;
  }

  /** Offset of the entry for `key`, or -1. */
  find(key: number): number {
    const { entries, stride, index } = this;
    if (index === null) {
      for (let at = 0; at < entries.length; at += stride) if (entries[at] === key) return at;
      return -1;
    }
    const mask = index.length - 1;
    for (let slot = (key >>> 0) & mask; ; slot = (slot + 1) & mask) {
      const n = index[slot] as number;
      if (n === 0) return -1;
      const at = (n - 1) * stride;
      if (entries[at] === key) return at;
    }
  }

  /** Offset of the entry for `key`, created with every second NONE if missing. */
  ensure(key: number): number {
    const found = this.find(key);
    if (found !== -1) return found;
    const at = this.entries.length;
    if (at < SCAN_LIMIT * this.stride) {
      // Exact-size copies while small (most assets hold a few sessions); amortised growth past that.
      const fresh = this.stride === 4 ? [key, NONE, NONE, NONE] : [key, NONE];
      this.entries = at === 0 ? fresh : this.entries.concat(fresh);
    } else {
      this.entries.push(key);
      for (let i = 1; i < this.stride; i++) this.entries.push(NONE);
    }
    const count = this.size;
    if (count > SCAN_LIMIT) {
      if (this.index === null || count * 2 > this.index.length) this.reindex();
      else this.place(count - 1);
    }
    return at;
  }

  private place(entry: number): void {
    const index = this.index as Int32Array;
    const mask = index.length - 1;
    let slot = ((this.entries[entry * this.stride] as number) >>> 0) & mask;
    while (index[slot] !== 0) slot = (slot + 1) & mask;
    index[slot] = entry + 1;
  }

  private reindex(): void {
    const count = this.size;
    if (count <= SCAN_LIMIT) {
      this.index = null;
      return;
    }
    let slots = 16;
    while (slots < count * 4) slots *= 2;
    this.index = new Int32Array(slots);
    for (let e = 0; e < count; e++) this.place(e);
  }

  /**
   * Sets every second for which `live` is false to NONE and drops entries left with none;
   * returns how many entries went.
   */
  prune(live: (second: number) => boolean): number {
    const { entries, stride } = this;
    const kept: number[] = [];
    for (let at = 0; at < entries.length; at += stride) {
      let any = false;
      for (let i = 1; i < stride; i++) {
        const second = entries[at + i] as number;
        if (second !== NONE && live(second)) any = true;
        else entries[at + i] = NONE;
      }
      if (any) for (let i = 0; i < stride; i++) kept.push(entries[at + i] as number);
    }
    const removed = (entries.length - kept.length) / stride;
    if (removed > 0) {
      this.entries = kept;
      this.reindex();
    }
    return removed;
  }

  /** Snapshot form. */
  toJSON(): number[] {
    return this.entries;
  }

  /** Loads entries written by toJSON (already checked to be finite numbers). */
  load(entries: number[]): void {
    if (entries.length % this.stride !== 0) throw new Error('malformed mark table');
    this.entries = entries;
    this.reindex();
  }
}
