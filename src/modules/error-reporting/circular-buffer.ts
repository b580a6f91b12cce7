/**
 * A fixed-capacity FIFO over one preallocated array: O(1) push and shift, and memory that never
 * grows past `capacity`, whatever the producers and consumers do.
 */
export class CircularBuffer<T> {
  private readonly items: Array<T | undefined>;
  private head = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
    this.items = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.size;
  }

  get full(): boolean {
    return this.size === this.capacity;
  }

  /** Appends unless full; returns whether it was appended. */
  push(item: T): boolean {
    if (this.size === this.capacity) return false;
    this.items[(this.head + this.size) % this.capacity] = item;
    this.size += 1;
    return true;
  }

  /** Appends, overwriting the oldest item when full (a ring of recent things). */
  pushEvicting(item: T): void {
    if (this.size === this.capacity) {
      this.items[this.head] = item;
      this.head = (this.head + 1) % this.capacity;
    } else {
      this.push(item);
    }
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.size -= 1;
    return item;
  }

  /** Removes and returns every item, oldest first. */
  drain(): T[] {
    const out: T[] = [];
    for (let item = this.shift(); item !== undefined; item = this.shift()) out.push(item);
    return out;
  }

  /** Items oldest first, without removing them. */
  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.size; i += 1) out.push(this.items[(this.head + i) % this.capacity] as T);
    return out;
  }
}
