/**
 * Session dedupe marks of one asset, in bounded and collector-friendly memory.
 *
 * A session is known by the 53-bit hash of its id that the batch carries (`../session-hash.ts`,
 * with its collision odds). Entries live in one open-addressing Uint32Array per asset (MarkTable).
 */

/** "Not counted". Seconds are never negative. */
export const NONE = -1;

const TWO_53 = 9007199254740992;
/** The key of one (session, error code) mark: the session hash moved by the code, still 53 bits. */
export const errorKey = (hash: number, code: number): number => (hash + code * 0x9e3779b1) % TWO_53;

/** A second in a slot: none set. Seconds since the epoch fit below it until 2106. */
const NO_SECOND = 0xffffffff;
/** The high word of an empty slot (a 53-bit key's high word is below 2^21). */
const EMPTY = 0xffffffff;
const TWO_32 = 4294967296;
/** The table grows past this share of its slots taken (linear probing stays short below it). */
const MAX_LOAD = 0.8;
/** Up to this many entries live in a small number list, found by scanning. */
const SMALL_LIMIT = 8;

/**
 * Marks keyed by a 53-bit number: `stride - 1` seconds per key (NONE when not set). Sessions
 * use stride 4 (manifest, ad, start); error marks stride 2 (the second of the code).
 *
 * Most assets hold a few sessions: up to SMALL_LIMIT entries sit in one exact-size number list
 * ([key, second..., key, second...]), found by scanning. Past that, one open-addressing table in
 * one Uint32Array, no object per mark: a slot is the key's two 32-bit words followed by its
 * seconds (20 bytes a session, 12 an error mark), found by linear probing from a slot picked by
 * the key's low word. Capacity grows by a quarter past 80 % load (tables sit between 64 % and
 * 80 % full: about 25 to 31 bytes per session mark) and is any number of slots, not a power of
 * two. The garbage collector sees one array per asset and never walks its contents. Two sessions
 * of an asset share a key with probability about n² / 2^54 for n sessions (see sessionHash); the
 * table itself never confuses two keys.
 *
 * Offsets returned by find and ensure are valid until the next ensure or prune.
 */
export class MarkTable {
  /** Small form: [key, second...] per entry, `stride` numbers each; null once a table. */
  private list: number[] | null = [];
  /** Table form: slots of `stride + 1` words (key high, key low, seconds). */
  private slots: Uint32Array | null = null;
  private count = 0;
  /**
   * No second held is earlier (a lower bound; NONE while none is held): prune skips a table
   * whose oldest mark is live. A small integer, not Infinity, so the field stays unboxed.
   */
  private oldest = NONE;

  constructor(readonly stride: number) {}

  /** Slots of the table form (0 while a small list). */
  private capacity(): number {
    return this.slots === null ? 0 : this.slots.length / this.words;
  }

  /** Words per slot. */
  private get words(): number {
    return this.stride + 1;
  }

  get size(): number {
    return this.count;
  }

  /** Offset of the entry for `key`, or -1. */
  find(key: number): number {
    const { list } = this;
    if (list !== null) {
      for (let at = 0; at < list.length; at += this.stride) if (list[at] === key) return at;
      return -1;
    }
    return this.findSlot(Math.floor(key / TWO_32), key >>> 0);
  }

  /** Offset of the entry for `key`, created with every second NONE if missing. */
  ensure(key: number): number {
    const found = this.find(key);
    if (found !== -1) return found;
    const { list, stride } = this;
    if (list !== null && this.count < SMALL_LIMIT) {
      const at = list.length;
      // Exact-size copies while small (most assets hold a few sessions).
      this.list = list.concat(stride === 4 ? [key, NONE, NONE, NONE] : [key, NONE]);
      this.count++;
      return at;
    }
    if (this.count + 1 > this.capacity() * MAX_LOAD) this.rebuild(this.count + 1);
    this.count++;
    return this.place(Math.floor(key / TWO_32), key >>> 0);
  }

  /** The second of mark `kind` (1 .. stride - 1) of the entry at `at`, or NONE. */
  second(at: number, kind: number): number {
    if (this.list !== null) return this.list[at + kind] as number;
    const s = (this.slots as Uint32Array)[at + 1 + kind] as number;
    return s === NO_SECOND ? NONE : s;
  }

  setSecond(at: number, kind: number, second: number): void {
    if (second !== NONE && (this.oldest === NONE || second < this.oldest)) this.oldest = second;
    if (this.list !== null) this.list[at + kind] = second;
    else (this.slots as Uint32Array)[at + 1 + kind] = second === NONE ? NO_SECOND : second;
  }

  private findSlot(high: number, low: number): number {
    const slots = this.slots as Uint32Array;
    const { words } = this;
    const capacity = slots.length / words;
    for (let slot = Math.floor((low * capacity) / TWO_32); ; slot = slot + 1 === capacity ? 0 : slot + 1) {
      const at = slot * words;
      const h = slots[at] as number;
      if (h === EMPTY) return -1;
      if (h === high && slots[at + 1] === low) return at;
    }
  }

  /** Puts a key (known absent) in its first free slot; returns the slot's offset. */
  private place(high: number, low: number): number {
    const slots = this.slots as Uint32Array;
    const { words } = this;
    const capacity = slots.length / words;
    let slot = Math.floor((low * capacity) / TWO_32);
    while (slots[slot * words] !== EMPTY) slot = slot + 1 === capacity ? 0 : slot + 1;
    const at = slot * words;
    slots[at] = high;
    slots[at + 1] = low;
    return at;
  }

  /** Every entry as [key, second...] (NONE for a second not set), in the order they sit. */
  private entries(): number[] {
    if (this.list !== null) return this.list.slice();
    const { stride, words } = this;
    const slots = this.slots as Uint32Array;
    const out: number[] = [];
    for (let at = 0; at < slots.length; at += words) {
      if (slots[at] === EMPTY) continue;
      out.push((slots[at] as number) * TWO_32 + (slots[at + 1] as number));
      for (let kind = 1; kind < stride; kind++) out.push(this.second(at, kind));
    }
    return out;
  }

  /**
   * Rebuilds the whole table for `entries` keys from the current entries: a small list up to
   * SMALL_LIMIT, else slots sized for them (always the same sizes: 10, 13, 17, 22 ... slots,
   * the smallest keeping the load at most MAX_LOAD). A table grows slot by slot into the new
   * array: no list of its entries is made on the way (for an asset with 100,000 sessions that
   * list is 400,000 numbers of garbage at every growth).
   */
  private rebuild(entries: number): void {
    const { stride, words } = this;
    if (entries <= SMALL_LIMIT) {
      this.list = this.entries();
      this.slots = null;
      return;
    }
    let capacity = SMALL_LIMIT + 2;
    while (entries > capacity * MAX_LOAD) capacity = Math.ceil(capacity * 1.25);
    const { list, slots: old } = this;
    this.list = null;
    this.slots = new Uint32Array(capacity * words).fill(EMPTY);
    if (old !== null) {
      const slots = this.slots;
      for (let from = 0; from < old.length; from += words) {
        const high = old[from] as number;
        if (high === EMPTY) continue;
        const at = this.place(high, old[from + 1] as number);
        for (let word = 2; word < words; word++) slots[at + word] = old[from + word] as number;
      }
      return;
    }
    const current = list ?? [];
    for (let e = 0; e < current.length; e += stride) {
      const key = current[e] as number;
      const at = this.place(Math.floor(key / TWO_32), key >>> 0);
      for (let kind = 1; kind < stride; kind++) this.setSecond(at, kind, current[e + kind] as number);
    }
  }

  /**
   * Sets every second for which `live` is false to NONE and drops entries left with none;
   * returns how many entries went. `live` must be monotone (true for every second after one it
   * is true for), as AssetState.isLive is: a table whose oldest second is live is left as it is.
   */
  prune(live: (second: number) => boolean): number {
    // `live` holds for every second after one it holds for: nothing to do while the oldest is live.
    if (this.count === 0 || (this.oldest !== NONE && live(this.oldest))) return 0;
    const { stride } = this;
    const list = this.list;
    let oldest = NONE;
    if (list !== null) {
      const kept: number[] = [];
      for (let at = 0; at < list.length; at += stride) {
        let any = false;
        for (let i = 1; i < stride; i++) {
          const second = list[at + i] as number;
          if (second !== NONE && live(second)) {
            any = true;
            if (oldest === NONE || second < oldest) oldest = second;
          } else list[at + i] = NONE;
        }
        if (any) for (let i = 0; i < stride; i++) kept.push(list[at + i] as number);
      }
      const removed = (list.length - kept.length) / stride;
      this.oldest = oldest;
      if (removed > 0) {
        this.list = kept;
        this.count = kept.length / stride;
      }
      return removed;
    }
    const slots = this.slots as Uint32Array;
    const { words } = this;
    let removed = 0;
    for (let at = 0; at < slots.length; at += words) {
      if (slots[at] === EMPTY) continue;
      let any = false;
      for (let i = 2; i < words; i++) {
        const second = slots[at + i] as number;
        if (second !== NO_SECOND && live(second)) {
          any = true;
          if (oldest === NONE || second < oldest) oldest = second;
        } else slots[at + i] = NO_SECOND;
      }
      if (!any) {
        // Emptied in place; the rebuild below re-slots the rest (an emptied slot would cut probe chains).
        slots[at] = EMPTY;
        removed++;
      }
    }
    this.oldest = oldest;
    if (removed > 0) {
      this.count -= removed;
      this.rebuild(this.count);
    }
    return removed;
  }

  /**
   * Snapshot form: [key, second..., key, second...] with NONE for a second not set, in key
   * order (where entries sit depends on the history of the table; key order does not, so the
   * same marks always write the same line).
   */
  toJSON(): number[] {
    const { stride } = this;
    const entries = this.entries();
    const order = Array.from({ length: entries.length / stride }, (_, e) => e * stride);
    order.sort((a, b) => (entries[a] as number) - (entries[b] as number));
    const out = new Array<number>(entries.length);
    let o = 0;
    for (const at of order) for (let i = 0; i < stride; i++) out[o++] = entries[at + i] as number;
    return out;
  }

  /**
   * Loads entries written by toJSON (already checked to be finite numbers): keys are 53-bit
   * whole numbers, each once; seconds whole, from 0 below 2^32 - 1, or NONE.
   */
  load(entries: number[]): void {
    const { stride } = this;
    if (entries.length % stride !== 0) throw new Error('malformed mark table');
    const seen = new Set<number>();
    for (let e = 0; e < entries.length; e += stride) {
      const key = entries[e] as number;
      if (!Number.isSafeInteger(key) || key < 0) throw new Error('malformed mark key');
      if (seen.has(key)) throw new Error('repeated mark key');
      seen.add(key);
      for (let kind = 1; kind < stride; kind++) {
        const second = entries[e + kind] as number;
        if (second !== NONE && !(Number.isInteger(second) && second >= 0 && second < NO_SECOND)) throw new Error('malformed mark second');
      }
    }
    this.loadUnchecked(entries);
  }

  private loadUnchecked(entries: number[]): void {
    this.list = entries;
    this.slots = null;
    this.count = entries.length / this.stride;
    this.oldest = NONE;
    for (let e = 0; e < entries.length; e += this.stride) {
      for (let kind = 1; kind < this.stride; kind++) {
        const second = entries[e + kind] as number;
        if (second !== NONE && (this.oldest === NONE || second < this.oldest)) this.oldest = second;
      }
    }
    if (this.count > SMALL_LIMIT) this.rebuild(this.count);
  }
}
