import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RankedAssets } from './ranked-assets.js';
import { seededRandom } from '../test-events.test-support.js';

class Item {
  rankNew = 0;
  rankTs = 0;
  constructor(
    readonly id: string,
    readonly seq: number,
  ) {}
}

const expectedOrder = (items: Iterable<Item>) =>
  [...items].sort((a, b) => b.rankNew - a.rankNew || b.rankTs - a.rankTs || a.seq - b.seq).map((i) => i.id);

test('random inserts, removals and re-keys keep the exact order (new desc, ts desc, older first)', () => {
  const random = seededRandom(7);
  const rank = new RankedAssets<Item>();
  const present = new Set<Item>();
  const items = Array.from({ length: 3000 }, (_, i) => new Item(`a${i}`, 3000 - i));
  for (let step = 0; step < 20_000; step++) {
    const item = items[Math.floor(random() * items.length)] as Item;
    if (present.has(item)) {
      assert.equal(rank.remove(item), true);
      present.delete(item);
      if (random() < 0.5) continue;
    }
    item.rankNew = Math.floor(random() * 4);
    item.rankTs = 1_000 + Math.floor(random() * 50);
    rank.insert(item);
    present.add(item);
  }
  assert.equal(rank.size, present.size);
  assert.deepEqual([...rank].map((i) => i.id), expectedOrder(present));
  assert.equal(rank.remove(new Item('never-inserted', 99_999)), false);
});

test('rebuild sorts everything at once and later inserts still land in place', () => {
  const items = Array.from({ length: 2000 }, (_, i) => Object.assign(new Item(`b${i}`, (i * 7) % 2003), { rankNew: i % 5, rankTs: i % 17 }));
  const rank = new RankedAssets<Item>();
  rank.rebuild([...items]);
  const extra = Object.assign(new Item('extra', 5000), { rankNew: 2, rankTs: 9 });
  rank.insert(extra);
  assert.deepEqual([...rank].map((i) => i.id), expectedOrder([...items, extra]));
  assert.equal(rank.size, 2001);
});
