import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Redis } from 'ioredis';
import { testRedis, type TestRedis } from '../../../test/helpers/redis.js';
import { FakeClock } from '../../platform/clock.js';
import { RedisSingleUseGuard } from './redis-single-use-guard.js';
import { MemorySingleUseGuard, releaseClaims, type SingleUseGuard } from './single-use-guard.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const DAY = 86_400_000;

interface Store {
  name: string;
  skip: string | false;
  /** A fresh guard whose claims last at most `maxTtlMs`. */
  guard(clock: FakeClock, maxTtlMs?: number): SingleUseGuard;
}

/** What every store must do: the contract the validator relies on. */
function contract(store: Store): void {
  describe(`single-use guard contract: ${store.name}`, { skip: store.skip }, () => {
    test('a value is claimed once; a second claim is refused until it is given back', async () => {
      const clock = new FakeClock();
      const guard = store.guard(clock);
      const exp = clock.now() + 3_600_000;
      assert.equal(await guard.claim(A, 'session-1', exp), true);
      assert.equal(await guard.claim(A, 'session-1', exp), false);
      await guard.release(A, 'session-1');
      assert.equal(await guard.claim(A, 'session-1', exp), true, 'released: claimable again');
    });

    test('claims are per workspace: the same value is claimable once in each', async () => {
      const clock = new FakeClock();
      const guard = store.guard(clock);
      const exp = clock.now() + 3_600_000;
      assert.equal(await guard.claim(A, 'shared-value', exp), true);
      assert.equal(await guard.claim(B, 'shared-value', exp), true);
      assert.equal(await guard.claim(B, 'shared-value', exp), false);
      await guard.release(B, 'shared-value');
      assert.equal(await guard.claim(A, 'shared-value', exp), false, "B's release leaves A's claim");
    });

    test('of concurrent claims of one value exactly one wins', async () => {
      const clock = new FakeClock();
      const guard = store.guard(clock);
      const results = await Promise.all(Array.from({ length: 20 }, () => guard.claim(A, 'raced', clock.now() + 60_000)));
      assert.equal(results.filter(Boolean).length, 1);
    });

    test('releaseClaims gives every claim back and reports a failed release instead of throwing', async () => {
      const clock = new FakeClock();
      const guard = store.guard(clock);
      const exp = clock.now() + 60_000;
      await guard.claim(A, 'one', exp);
      await guard.claim(B, 'two', exp);
      const broken: SingleUseGuard = { claim: () => Promise.resolve(true), release: () => Promise.reject(new Error('store down')) };
      const errors: unknown[] = [];
      await releaseClaims([{ guard, owner: A, key: 'one' }, { guard: broken, owner: A, key: 'x' }, { guard, owner: B, key: 'two' }], (e) => errors.push(e));
      assert.equal(errors.length, 1);
      assert.equal(await guard.claim(A, 'one', exp), true);
      assert.equal(await guard.claim(B, 'two', exp), true);
    });
  });
}

contract({ name: 'memory', skip: false, guard: (clock, maxTtlMs = DAY) => new MemorySingleUseGuard({ clock, capacityPerOwner: 1000, maxTtlMs }) });

const redis: TestRedis = await testRedis();
let client: Redis;
contract({
  name: 'Redis',
  skip: redis.skip,
  guard: (clock, maxTtlMs = DAY) => {
    client ??= redis.client();
    return new RedisSingleUseGuard({ redis: client, prefix: `${redis.prefix()}edge:pbs:`, clock, maxTtlMs });
  },
});
after(() => redis.cleanup());

describe('MemorySingleUseGuard: expiry and bounds per workspace', () => {
  test('an expired claim is forgotten; no claim outlives maxTtlMs, whatever expiry the URL asks for', async () => {
    const clock = new FakeClock();
    const guard = new MemorySingleUseGuard({ clock, capacityPerOwner: 10, maxTtlMs: 5000 });
    assert.equal(await guard.claim(A, 'pbs-1', clock.now() + 1000), true);
    clock.advance(1001);
    assert.equal(await guard.claim(A, 'pbs-1', clock.now() + 10 * DAY), true, 'expired claims are forgotten');
    clock.advance(4999);
    assert.equal(await guard.claim(A, 'pbs-1', clock.now() + 1000), false);
    clock.advance(1);
    assert.equal(await guard.claim(A, 'pbs-1', clock.now() + 1000), true, 'held for maxTtlMs at most');
  });

  test('workspace A filling its share evicts its own oldest, never B\'s: B\'s used value stays refused', async () => {
    const clock = new FakeClock();
    const guard = new MemorySingleUseGuard({ clock, capacityPerOwner: 3, maxTtlMs: DAY });
    const exp = clock.now() + 3_600_000;
    assert.equal(await guard.claim(B, 'b-used', exp), true);
    for (let i = 0; i < 1000; i++) assert.equal(await guard.claim(A, `a-${i}`, exp), true);
    assert.equal(await guard.claim(B, 'b-used', exp), false, "B's claim survived A's flood");
    assert.equal(guard.size, 4, 'A holds its 3, B its 1');
    assert.equal(guard.evicted, 997);
    assert.equal(await guard.claim(A, 'a-0', exp), true, "A's evicted claim is claimable again");
    assert.equal(await guard.claim(A, 'a-999', exp), false, "A's newest is still held");
  });

  test('expired entries are swept while claiming, those of a workspace that stopped playing too', async () => {
    const clock = new FakeClock();
    const guard = new MemorySingleUseGuard({ clock, capacityPerOwner: 100, maxTtlMs: DAY });
    for (let i = 0; i < 5; i++) await guard.claim(A, `old-${i}`, clock.now() + 10);
    for (let i = 0; i < 5; i++) await guard.claim(B, `old-${i}`, clock.now() + 10);
    clock.advance(11);
    await guard.claim(B, 'new', clock.now() + 10);
    assert.equal(guard.size, 1, "B's claim swept B's expired entries and A's, which claims no more");
  });
});

describe('RedisSingleUseGuard: keys and expiry', { skip: redis.skip }, () => {
  let prefix: string;
  let r: Redis;
  before(() => {
    prefix = `${redis.prefix()}edge:drm:`;
    r = redis.client();
  });

  test('one key per claimed value under the prefix, living until the URL expires and at most maxTtlMs', async () => {
    const clock = new FakeClock();
    const guard = new RedisSingleUseGuard({ redis: r, prefix, clock, maxTtlMs: 600_000 });
    assert.equal(await guard.claim(A, 'sig-1', clock.now() + 60_000), true);
    assert.equal(await guard.claim(A, 'sig-2', clock.now() + 10 * DAY), true);
    assert.deepEqual((await r.keys(`${prefix}*`)).sort(), [`${prefix}${A}:sig-1`, `${prefix}${A}:sig-2`]);
    const [short, capped] = [await r.pttl(`${prefix}${A}:sig-1`), await r.pttl(`${prefix}${A}:sig-2`)];
    assert.ok(short > 0 && short <= 60_000, `pttl ${short}`);
    assert.ok(capped > 60_000 && capped <= 600_000, `pttl ${capped}`);
  });
});
