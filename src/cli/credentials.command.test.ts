import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { playline } from '../../test/helpers/cli.js';
import { systemClock } from '../platform/clock.js';

describe('which credentials the CLI signs with: PLAYLINE_API_KEY against the saved profile (issue 36)', () => {
  let t: TestApp;
  let url: string;
  let home: string;
  const wrongKey = 'pl_wrong_key_0123456789abcdefghijklmnop';
  before(async () => {
    t = await createTestApp({ clock: systemClock });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    home = mkdtempSync(join(tmpdir(), 'playline-cli-creds-'));
    mkdirSync(join(home, 'playline'), { recursive: true });
    writeFileSync(join(home, 'playline', 'config.json'), JSON.stringify({ profiles: { default: { base_url: url, owner: t.workspace.id, key: t.key.secret } } }), { mode: 0o600 });
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  test('a PLAYLINE_API_KEY that differs from the profile\'s key: one warning naming both sources, the 401 says which key signed, no secret printed', async () => {
    const out = await playline(['usage'], { XDG_CONFIG_HOME: home, PLAYLINE_API_KEY: wrongKey, PLAYLINE_BASE_URL: undefined });
    assert.equal(out.status, 1);
    const warnings = out.stderr.split('\n').filter((line) => line.includes('not the key saved in profile'));
    assert.equal(warnings.length, 1, out.stderr);
    assert.match(warnings[0] ?? '', /^playline: signing with PLAYLINE_API_KEY from the environment, not the key saved in profile "default" \(.+config\.json\): they differ; unset PLAYLINE_API_KEY to use the profile$/);
    assert.match(out.stderr, /^playline: 401 [a-z_]+: .+\n {2}signed as: workspace [0-9a-f]{32}, key from PLAYLINE_API_KEY$/m);
    assert.ok(!out.stderr.includes(wrongKey) && !out.stderr.includes(t.key.secret), 'never a secret on stderr');
  });

  test('the same key in both places, or the profile alone: no warning, the call succeeds', async () => {
    const same = await playline(['usage'], { XDG_CONFIG_HOME: home, PLAYLINE_API_KEY: t.key.secret, PLAYLINE_BASE_URL: undefined });
    assert.equal(same.status, 0, same.stderr);
    assert.doesNotMatch(same.stderr, /not the key saved/);
    const profileOnly = await playline(['usage'], { XDG_CONFIG_HOME: home, PLAYLINE_API_KEY: undefined, PLAYLINE_BASE_URL: undefined });
    assert.equal(profileOnly.status, 0, profileOnly.stderr);
    assert.equal(profileOnly.stderr, '');
  });
});
