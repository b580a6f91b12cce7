import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomIds, sequentialIds } from './ids.js';

test('random hex ids: 32 lowercase hex characters, all different across many refills of the byte pool', () => {
  const seen = new Set<string>();
  // 256 ids per 4 KiB pool: 10,000 ids cross about 40 refills.
  for (let i = 0; i < 10_000; i++) {
    const id = randomIds.hex();
    assert.match(id, /^[0-9a-f]{32}$/);
    assert.equal(seen.has(id), false, `id ${id} repeated after ${i} ids`);
    seen.add(id);
  }
});

test('random UUIDs are v4, and sequential ids are predictable for tests', () => {
  assert.match(randomIds.uuid(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const ids = sequentialIds();
  assert.equal(ids.hex(), '0'.repeat(31) + '1');
  assert.equal(ids.uuid(), '00000000-0000-4000-8000-000000000002');
});
