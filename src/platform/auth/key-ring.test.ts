import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock.js';
import { AppError } from '../errors.js';
import { Authenticator } from './authenticator.js';
import { KeyRing } from './key-ring.js';
import type { SigningKey } from './signing-key.js';
import { signV4 } from './v4-signature.js';

/** The keys of a shared database that another process (the CLI, another instance) changes. */
function database() {
  const byOwner = new Map<string, SigningKey[]>();
  const loads: string[] = [];
  return {
    load: async (owner: string) => {
      loads.push(owner);
      return byOwner.get(owner)?.map((k) => ({ ...k })) ?? null;
    },
    add: (owner: string, id: string) => byOwner.set(owner, [...(byOwner.get(owner) ?? []), { id, kind: 'api', secret: Buffer.from(`secret-${id}`), revoked: false }]),
    revoke: (owner: string, id: string) => byOwner.get(owner)?.forEach((k) => k.id === id && (k.revoked = true)),
    loads,
  };
}

/** KeyRing and Authenticator exactly as the runtime builds them: default TTLs. */
function asInTheRuntime() {
  const clock = new FakeClock();
  const db = database();
  const ring = new KeyRing(db.load, clock);
  const auth = new Authenticator({ keys: ring, clock, toleranceS: 300 });
  const pair = (owner: string, id: string) => signV4(owner, `secret-${id}`, Math.floor(clock.now() / 1000));
  const outcome = (p: { msg: string; sig: string }) =>
    auth.authenticate(p.msg, p.sig).then(
      (v) => v.context.keyId,
      (err: unknown) => (err instanceof AppError ? err.code : String(err)),
    );
  return { clock, db, ring, outcome, pair };
}

describe('the key cache\'s documented bounds (runtime defaults, fake clock)', () => {
  test('a revocation by another process is seen within 2 s: the worst case is a pair remembered just before the key set expires', async () => {
    const { clock, db, outcome, pair } = asInTheRuntime();
    db.add('w1', 'k0');
    db.add('w1', 'k1');
    assert.equal(await outcome(pair('w1', 'k0')), 'k0'); // t = 0: a request signed with another key reads the owner's keys
    clock.advance(999);
    const late = pair('w1', 'k1');
    assert.equal(await outcome(late), 'k1'); // t = 999: verified with the cached keys, remembered for 1 s
    db.revoke('w1', 'k1');
    clock.advance(999);
    assert.equal(await outcome(late), 'k1', 't = 1998: the remembered pair still answers');
    clock.advance(1);
    assert.equal(await outcome(late), 'key_revoked', 't = 1999: the pair expired, the key set is re-read');
  });

  test('without a remembered pair, a revocation is seen once the owner\'s key set is 1 s old', async () => {
    const { clock, db, outcome, pair } = asInTheRuntime();
    db.add('w1', 'k1');
    assert.equal(await outcome(pair('w1', 'k1')), 'k1');
    db.revoke('w1', 'k1');
    clock.advance(500);
    assert.equal(await outcome(pair('w1', 'k1')), 'k1', 'a new pair, verified against the cached keys');
    clock.advance(500);
    assert.equal(await outcome(pair('w1', 'k1')), 'key_revoked');
  });

  test('a key created by another process works at once (a failed signature re-reads the keys), at most 200 ms after the last read', async () => {
    const { clock, db, outcome, pair } = asInTheRuntime();
    db.add('w1', 'k1');
    assert.equal(await outcome(pair('w1', 'k1')), 'k1');
    db.add('w1', 'k2');
    clock.advance(199);
    assert.equal(await outcome(pair('w1', 'k2')), 'invalid_signature', 'read less than 200 ms ago: no forced re-read');
    clock.advance(1);
    assert.equal(await outcome(pair('w1', 'k2')), 'k2');
  });
});

describe('the key cache when full', () => {
  test('the least recently used owner is forgotten, alone: the others are served without a read', async () => {
    const clock = new FakeClock();
    const db = database();
    for (const owner of ['a', 'b', 'c', 'd']) db.add(owner, `${owner}1`);
    const ring = new KeyRing(db.load, clock, { maxOwners: 3 });
    for (const owner of ['a', 'b', 'c']) await ring.get(owner);
    await ring.get('a'); // a is now the most recently used
    await ring.get('d'); // full: b goes
    db.loads.length = 0;
    for (const owner of ['a', 'c', 'd']) await ring.get(owner);
    assert.deepEqual(db.loads, [], 'no reload for the owners kept');
    await ring.get('b');
    assert.deepEqual(db.loads, ['b']);
  });

  test('an owner whose read failed is read again on the next request', async () => {
    const clock = new FakeClock();
    let fail = true;
    const ring = new KeyRing(async () => {
      if (fail) throw new Error('database down');
      return [];
    }, clock);
    await assert.rejects(ring.get('w1'), /database down/);
    fail = false;
    assert.deepEqual(await ring.get('w1'), []);
  });
});
