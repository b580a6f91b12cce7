import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../config.js';
import { defaultRestartSettings, restartDelay, restartSettingsOf } from './supervision-policy.js';

test('the restart delay: none without a failure, then the first wait doubling per failure in a row up to the cap', () => {
  const policy = { initialMs: 1000, maxMs: 30_000 };
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7].map((n) => restartDelay(n, policy)), [0, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  assert.equal(restartDelay(-1, policy), 0);
});

test('the restart delay stays finite and capped however long the failures go on', () => {
  const policy = { initialMs: 3_600_000, maxMs: 3_600_000 };
  for (const n of [31, 1024, Number.MAX_SAFE_INTEGER]) assert.equal(restartDelay(n, policy), 3_600_000);
  assert.equal(restartDelay(5, { initialMs: 5000, maxMs: 1000 }), 1000, 'a cap below the first wait wins');
});

test('the restart settings come from PLAYLINE_MEDIA_*, and their defaults are the documented ones', () => {
  assert.deepEqual(restartSettingsOf(loadConfig({})), defaultRestartSettings);
  assert.deepEqual(defaultRestartSettings, { backoff: { initialMs: 1000, maxMs: 30_000 }, killGraceMs: 3000 });
  const set = restartSettingsOf(loadConfig({ PLAYLINE_MEDIA_RESTART_BACKOFF_MS: '250', PLAYLINE_MEDIA_RESTART_BACKOFF_MAX_MS: '4000', PLAYLINE_MEDIA_KILL_GRACE_MS: '0' }));
  assert.deepEqual(set, { backoff: { initialMs: 250, maxMs: 4000 }, killGraceMs: 0 });
});
