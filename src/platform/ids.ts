import { randomBytes, randomUUID } from 'node:crypto';

/** Generator of system-defined identifiers; injectable so tests can make them predictable. */
export interface IdGenerator {
  /** A 32-character lowercase hex id (workspaces, assets, targets, slicers). */
  hex(): string;
  /** An RFC 4122 v4 UUID (tasks, deliveries). */
  uuid(): string;
}

export const randomIds: IdGenerator = {
  hex: () => randomBytes(16).toString('hex'),
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
