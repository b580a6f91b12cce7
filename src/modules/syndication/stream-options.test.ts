import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { planPush } from './push-plan.js';
import { checkStreamOptions } from './stream-options.js';
import { createSyndicationTestApp, type SyndicationTestApp } from './syndication.test-support.js';
import type { TargetCreateBody } from './syndication.schema.js';

// An attacker's target: every query key used to become an ffmpeg option (a preset line), so
// vcodec turned the copy into an encode and x264's stats= wrote a file anywhere the server can.
const HOSTILE = '?vcodec=libx264&flags=%2Bpass1&stats=/var/lib/playline/secret.key';
const SECRET = 'passphrase-CLEARTEXT-91';

describe('SRT and RIST target options are an allow-list', () => {
  let s: SyndicationTestApp;
  const send = async (method: string, path: string, body: unknown) => {
    const response = await s.client.core.send(method, `/api/v4${path}`, { body });
    return { status: response.status, text: response.body, json: JSON.parse(response.body) as { code?: string; id?: string; errors?: { path: string; message: string }[] } };
  };
  before(async () => {
    s = await createSyndicationTestApp();
  });
  after(() => s.close());

  test('a target with codec or muxer keys (vcodec, flags, stats) is 400 validation_failed naming each key, on POST and on PATCH', async () => {
    for (const protocol of ['srt', 'rist'] as const) {
      const created = await send('POST', '/syndication-target', { platform: 'Custom', target_protocol: protocol, target_stream: `${protocol}://198.51.100.7:9000${HOSTILE}` });
      assert.equal(created.status, 400, created.text);
      assert.equal(created.json.code, 'validation_failed');
      const messages = (created.json.errors ?? []).filter((e) => e.path === '/target_stream').map((e) => e.message);
      for (const key of ['vcodec', 'flags', 'stats']) assert.ok(messages.some((m) => m.includes(`"${key}"`)), `${protocol}: ${key} is named (${messages.join('; ')})`);
      assert.ok(!created.text.includes('secret.key'), 'the value is never echoed');
    }
    const good = await send('POST', '/syndication-target', { platform: 'Custom', target_protocol: 'srt', target_stream: `srt://198.51.100.7:9000?passphrase=${SECRET}&latency=200000` });
    assert.equal(good.status, 201, good.text);
    const patched = await send('PATCH', `/syndication-target/${String(good.json.id)}`, { platform: 'Custom', target_protocol: 'srt', target_stream: `srt://198.51.100.7:9000${HOSTILE}` });
    assert.equal(patched.status, 400);
    assert.ok((patched.json.errors ?? []).some((e) => e.path === '/target_stream' && e.message.includes('"vcodec"')));
  });

  test('allowed options must be well formed, and a malformed one names the option, never its value', () => {
    assert.deepEqual(checkStreamOptions('srt', `?passphrase=${SECRET}&streamid=#!::r=live&pbkeylen=32&latency=120000`), []);
    assert.deepEqual(checkStreamOptions('rist', '?secret=s3cret&encryption=256'), []);
    const problems = checkStreamOptions('srt', '?passphrase=short&pbkeylen=7&latency=soon');
    assert.equal(problems.length, 3);
    assert.ok(problems.every((p) => !p.includes('short') && !p.includes('soon')));
    assert.match(checkStreamOptions('rist', '?passphrase=0123456789')[0] ?? '', /"passphrase" is not an rist option/);
    assert.match(checkStreamOptions('srt', `?passphrase=${SECRET}&passphrase=${SECRET}`)[0] ?? '', /given twice/);
  });

  test('a stored target that carries a key off the list is never handed to ffmpeg (the plan refuses it)', () => {
    const stored: TargetCreateBody = { platform: 'Custom', target_protocol: 'srt', target_stream: `srt://198.51.100.7:9000${HOSTILE}` };
    assert.throws(() => planPush(stored, {}), /publishing_unavailable|not an srt option/);
    const plan = planPush({ platform: 'Custom', target_protocol: 'srt', target_stream: `srt://198.51.100.7:9000?passphrase=${SECRET}` }, {});
    assert.deepEqual(plan.kind === 'mpegts' ? plan.options : undefined, { passphrase: SECRET });
  });
});
