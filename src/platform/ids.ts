import { randomFillSync, randomUUID } from 'node:crypto';

/** Generator of system-defined identifiers; injectable so tests can make them predictable. */
export interface IdGenerator {
  /** A 32-character lowercase hex id (workspaces, assets, targets, slicers). */
  hex(): string;
  /** An RFC 4122 v4 UUID (tasks, deliveries). */
  uuid(): string;
}

/**
 * Random bytes for hex ids, drawn from the system's CSPRNG 4 KiB at a time (256 ids), as Node
 * does for randomUUID: one randomBytes(16) per id cost a getrandom call and ~13 µs of the event
 * loop each under load (the delivery log names every attempt). Same source, same quality.
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

const randomHex16 = (): string => {
  if (poolOffset + 16 > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + 16);
  poolOffset += 16;
  return hex;
};

export const randomIds: IdGenerator = {
  hex: randomHex16,
  uuid: () => randomUUID(),
};

/** Deterministic ids for tests: `hex()` yields 000…001, 000…002, … */
export const sequentialIds = (): IdGenerator => {
  let n = 0;
  return {
    hex: () => (++n).toString(16).padStart(32, '0'),
    uuid: () => {
      const h = (++n).toString(16).padStart(12, '0');
      return `00000000-0000-4000-8000-${h}`;
    },
  };
};
