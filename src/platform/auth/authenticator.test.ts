import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../clock.js';
import { AppError } from '../errors.js';
import type { SigningKey } from './signing-key.js';
import { Authenticator } from './authenticator.js';
import { KeyRing } from './key-ring.js';
import { signV4 } from './v4-signature.js';

const TTL_MS = 1000;
const MIN_RELOAD_MS = 200;

/** Keys as another process (the CLI, another instance) changes them in the shared database. */
function sharedKeys() {
  const byOwner = new Map<string, SigningKey[]>();
  let loads = 0;
  return {
    loader: async (owner: string) => {
      loads++;
      return byOwner.get(owner)?.map((k) => ({ ...k })) ?? null;
    },
    add(owner: string, id: string, secret: string) {
      byOwner.set(owner, [...(byOwner.get(owner) ?? []), { id, kind: 'api', secret: Buffer.from(secret), revoked: false }]);
    },
    revoke(owner: string, id: string) {
      for (const key of byOwner.get(owner) ?? []) if (key.id === id) key.revoked = true;
    },
    loads: () => loads,
  };
}

function setup() {
  const clock = new FakeClock();
  const store = sharedKeys();
  const ring = new KeyRing(store.loader, clock, { ttlMs: TTL_MS, minReloadMs: MIN_RELOAD_MS });
  const auth = new Authenticator({ keys: ring, clock, toleranceS: 300 });
  const sign = (owner: string, secret: string) => signV4(owner, secret, Math.floor(clock.now() / 1000));
  const verify = async (owner: string, secret: string) => {
    const { msg, sig } = sign(owner, secret);
    return auth.authenticate(msg, sig).then(
      (v) => v.context.keyId,
      (err: unknown) => (err instanceof AppError ? err.code : String(err)),
    );
  };
  return { clock, store, ring, auth, sign, verify };
}

describe('keys changed by another process', () => {
  test('a key created elsewhere is accepted at once, although the owner\'s keys are cached', async () => {
    const { clock, store, verify } = setup();
    store.add('w1', 'k1', 'secret-one');
    assert.equal(await verify('w1', 'secret-one'), 'k1');
    clock.advance(MIN_RELOAD_MS);
    store.add('w1', 'k2', 'secret-two');
    assert.equal(await verify('w1', 'secret-two'), 'k2', 'used while the cached set is still fresh');
    assert.equal(await verify('w1', 'secret-one'), 'k1');
  });

  test('a workspace created elsewhere moments after it was looked up is accepted at once', async () => {
    const { clock, store, verify } = setup();
    assert.equal(await verify('w2', 'secret'), 'unknown_owner');
    clock.advance(MIN_RELOAD_MS);
    store.add('w2', 'k1', 'secret');
    assert.equal(await verify('w2', 'secret'), 'k1');
  });

  test('a key created within the reload interval of the last read works once that interval has passed', async () => {
    const { clock, store, verify } = setup();
    store.add('w1', 'k1', 'secret-one');
    assert.equal(await verify('w1', 'secret-one'), 'k1');
    store.add('w1', 'k2', 'secret-two');
    clock.advance(MIN_RELOAD_MS - 1);
    assert.equal(await verify('w1', 'secret-two'), 'invalid_signature');
    clock.advance(1);
    assert.equal(await verify('w1', 'secret-two'), 'k2');
  });

  test('a key revoked elsewhere is refused within the documented bound (2 s), remembered pair or not', async () => {
    const { clock, store, auth, sign, verify } = setup();
    store.add('w1', 'k1', 'secret-one');
    const pair = sign('w1', 'secret-one');
    assert.equal((await auth.authenticate(pair.msg, pair.sig)).context.keyId, 'k1');
    store.revoke('w1', 'k1');
    clock.advance(2 * TTL_MS);
    assert.equal(auth.recall(pair.msg, pair.sig), undefined, 'the remembered pair has expired');
    await assert.rejects(auth.authenticate(pair.msg, pair.sig), (err: unknown) => err instanceof AppError && err.code === 'key_revoked');
    assert.equal(await verify('w1', 'secret-one'), 'key_revoked');
  });

  test('a flood of bad signatures reads the owner\'s keys at most once per reload interval', async () => {
    const { clock, store, verify } = setup();
    store.add('w1', 'k1', 'secret-one');
    assert.equal(await verify('w1', 'secret-one'), 'k1');
    const before = store.loads();
    for (let i = 0; i < 1000; i++) assert.equal(await verify('w1', `wrong-${i}`), 'invalid_signature');
    assert.ok(store.loads() - before <= 1, `${store.loads() - before} reads for 1000 bad signatures at one instant`);

    const start = store.loads();
    for (let i = 0; i < 1000; i++) {
      clock.advance(1);
      await verify('w1', `wrong-${i}`);
    }
    const allowed = 1000 / MIN_RELOAD_MS + 1000 / TTL_MS + 1;
    assert.ok(store.loads() - start <= allowed, `${store.loads() - start} reads in 1 s of bad signatures (at most ${allowed})`);
  });
});
