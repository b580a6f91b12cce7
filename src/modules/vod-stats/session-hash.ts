/**
 * The 53-bit hash a session is known by (DESIGN §3.2 dedupe). It is computed where a batch is
 * parsed (`event-columns.ts`, and `ingest/event-line.ts` straight from the bytes) and only
 * compared by the store's marks (`store/session-marks.ts`), so it sits beside the columns rather
 * than in the store. Two different sessions of one asset share a hash with probability about
 * n² / 2^54 for n sessions held (n = 10,000: ~6e-9), and then the later one is counted as a
 * duplicate of the earlier; `session-hash.test.ts` checks a million distinct ids for collisions.
 */

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
  return finishSessionHash(h1, h2);
};

/**
 * sessionHash of an ASCII id given as its bytes (`bytes` from `start` to `end`, each below 0x80):
 * an ASCII character's UTF-16 unit is its byte, so this is the same hash.
 */
export const sessionHashOfAscii = (bytes: Uint8Array, start: number, end: number): number => {
  let h1 = 0x811c9dc5;
  let h2 = 0x9747b28c ^ (end - start);
  for (let i = start; i < end; i++) {
    const c = bytes[i] as number;
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  }
  return finishSessionHash(h1, h2);
};

const finishSessionHash = (h1: number, h2: number): number => {
  const low = mix32(h1);
  const high = mix32(h2 ^ low);
  return (high & 0x1fffff) * 4294967296 + low;
};
