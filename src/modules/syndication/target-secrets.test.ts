import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../platform/secret-box.js';
import type { TargetCreateBody } from './syndication.schema.js';
import { maskedConfig, openTarget, sealTarget } from './target-secrets.js';

const box = new SecretBox(randomBytes(32));
const zixi: TargetCreateBody = {
  platform: 'Custom',
  target_protocol: 'zixi',
  platform_config: { host: 'zixi.example.net', port: 2088, password: 'pw-CLEAR', stream_id: 'sid-CLEAR', type: 'push' },
};
const rtmp: TargetCreateBody = { platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://h.example/live/key-CLEAR' };

test('a sealed target holds no secret in clear and opens back to the original', () => {
  for (const target of [zixi, rtmp]) {
    const sealed = sealTarget(target, box);
    assert.ok(!JSON.stringify(sealed).includes('CLEAR'), 'a secret reached the storage form in clear');
    assert.deepEqual(openTarget(sealed, box), { description: '', platform_config: {}, ...target });
  }
  assert.deepEqual(sealTarget(zixi, box).secret_fields, ['password', 'stream_id']);
  assert.deepEqual(sealTarget(rtmp, box).secret_fields, ['target_stream']);
});

test('maskedConfig shows each stored secret as the mask and public keys as stored', () => {
  assert.deepEqual(maskedConfig(sealTarget(zixi, box)), {
    host: 'zixi.example.net',
    port: 2088,
    type: 'push',
    password: '********',
    stream_id: '********',
  });
  assert.deepEqual(maskedConfig(sealTarget(rtmp, box)), {});
});

test('resealing keeps the sealed blob when no secret changed, and makes a new one when one did', () => {
  const sealed = sealTarget(zixi, box);
  const renamed = sealTarget({ ...zixi, description: 'renamed' }, box, { sealed, clear: zixi });
  assert.equal(renamed.secrets, sealed.secrets);
  const rotated = { ...zixi, platform_config: { ...zixi.platform_config, password: 'pw-NEW' } };
  const resealed = sealTarget(rotated, box, { sealed, clear: zixi });
  assert.notEqual(resealed.secrets, sealed.secrets);
  assert.equal(openTarget(resealed, box).platform_config?.password, 'pw-NEW');
});
