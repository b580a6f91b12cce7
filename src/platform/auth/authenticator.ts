import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import type { KeyKind, SigningKey } from './signing-key.js';
import type { KeyRing } from './key-ring.js';
import { decodeMsg, signatureOf, signaturesEqual } from './v4-signature.js';

/** Who a request was signed by. */
export interface AuthContext {
  owner: string;
  keyId: string;
  keyKind: KeyKind;
}

/** A verified signed request: who signed it, and the request parameters its msg carries. */
export interface Verified {
  readonly context: AuthContext;
  /** Keys of msg other than `_owner` and `_timestamp`; undefined when there is none. */
  readonly params: Readonly<Record<string, unknown>> | undefined;
  readonly timestamp: number;
  readonly expiresAt: number;
}

export interface AuthenticatorOptions {
  keys: KeyRing;
  clock: Clock;
  toleranceS: number;
  /** How long a verified (msg, sig) pair is remembered; bounded by the key ring's freshness. */
  cacheMs?: number;
  /** Pairs remembered at most; past it the least recently used is forgotten. Default 10,000. */
  cacheSize?: number;
}

/**
 * Verifies the platform's v4 signature: msg/sig decoded, owner known, sig equal (constant time)
 * to the HMAC under one of the owner's active keys, timestamp within the tolerance.
 * A verified pair is remembered briefly so that a client repeating a signed URL costs a lookup.
 */
export class Authenticator {
  private readonly verified: LRUCache<string, Verified>;
  private cacheMs: number;

  constructor(private readonly options: AuthenticatorOptions) {
    this.cacheMs = options.cacheMs ?? 1000;
    // Expired pairs are dropped on the request's clock (ttlResolution 0: no real-time debounce).
    this.verified = new LRUCache<string, Verified>({
      max: options.cacheSize ?? 10_000,
      ttl: Math.max(1, this.cacheMs),
      ttlResolution: 0,
      perf: { now: () => options.clock.now() },
    });
  }

  /**
   * The fast path: a pair verified moments ago answers without decoding or hashing.
   * Undefined when the pair must be verified in full by `authenticate`.
   */
  recall(received: string | undefined, sig: string | undefined): Verified | undefined {
    if (!received || !sig || this.cacheMs === 0) return undefined;
    const hit = this.verified.get(`${sig}:${received}`);
    if (!hit) return undefined;
    const now = this.options.clock.now();
    if (hit.expiresAt <= now) return undefined;
    this.checkTimestamp(hit.timestamp, now);
    return hit;
  }

  async authenticate(received: string | undefined, sig: string | undefined): Promise<Verified> {
    if (!received || !sig) throw new AppError('missing_signature', `Missing ${!received ? 'msg' : 'sig'}: sign the request with msg and sig in the query string`);
    const recalled = this.recall(received, sig);
    if (recalled) return recalled;
    const now = this.options.clock.now();
    // A `+` that a client left unencoded arrives as a space; base64 never holds spaces.
    const msg = received.includes(' ') ? received.replaceAll(' ', '+') : received;
    const cacheKey = `${sig}:${received}`;
    const credential = decodeMsg(msg);
    const ring = this.options.keys;
    let used = ring.current(credential.owner);
    let outcome = matchKey(await used.keys, msg, sig);
    // A key or workspace made moments ago by another process (the CLI, another instance) is not
    // in a cached key set yet: one newer set is tried (rate limited per owner by the ring).
    if (outcome === 'unknown_owner' || outcome === 'no_match') {
      const newer = ring.newer(credential.owner, used);
      if (newer) {
        used = newer;
        outcome = matchKey(await used.keys, msg, sig);
      }
    }
    if (outcome === 'unknown_owner') throw new AppError('unknown_owner', 'The owner in msg is not a known workspace');
    if (outcome === 'revoked') throw new AppError('key_revoked', 'The key that signed this request has been revoked');
    if (outcome === 'no_match') throw new AppError('invalid_signature', 'sig does not match msg under any active key of the owner');
    this.checkTimestamp(credential.timestamp, now);
    const verified: Verified = {
      context: { owner: credential.owner, keyId: outcome.id, keyKind: outcome.kind },
      params: credential.params,
      timestamp: credential.timestamp,
      expiresAt: now + this.cacheMs,
    };
    if (this.cacheMs > 0) this.verified.set(cacheKey, verified);
    return verified;
  }

  private checkTimestamp(timestamp: number, now: number): void {
    const skew = Math.abs(now / 1000 - timestamp);
    if (skew > this.options.toleranceS) {
      throw new AppError('timestamp_out_of_range', `_timestamp is ${Math.round(skew)} s away from server time (tolerance ${this.options.toleranceS} s)`);
    }
  }

  /** Verify every request in full (benchmarks price the whole path with it). */
  disableCache(): void {
    this.verified.clear();
    this.cacheMs = 0;
  }

  /** Forget remembered pairs (after a key is revoked locally). */
  forget(): void {
    this.verified.clear();
  }
}

/**
 * The active key that signed msg, or why none did. Every key is compared, so the time taken
 * does not tell which one matched.
 */
function matchKey(keys: SigningKey[] | null, msg: string, sig: string): SigningKey | 'unknown_owner' | 'revoked' | 'no_match' {
  if (!keys) return 'unknown_owner';
  let match: SigningKey | undefined;
  let revokedMatch = false;
  for (const key of keys) {
    if (signaturesEqual(signatureOf(key.secret, msg), sig)) {
      if (key.revoked) revokedMatch = true;
      else match ??= key;
    }
  }
  return match ?? (revokedMatch ? 'revoked' : 'no_match');
}
