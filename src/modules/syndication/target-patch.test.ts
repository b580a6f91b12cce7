import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClippingProfileLookup } from './platform-rules.js';
import type { TargetCreateBody } from './syndication.schema.js';
import { patchTarget } from './target-patch.js';

const noProfiles: ClippingProfileLookup = () => undefined;
const zixiTarget: TargetCreateBody = {
  description: 'Pluto feed',
  platform: 'Pluto TV',
  target_protocol: 'zixi',
  platform_config: { host: 'zixi.example.net', port: 2088, password: 'old-pw', stream_id: 'sid-1' },
};

const ok = (result: ReturnType<typeof patchTarget>): TargetCreateBody => {
  assert.ok(result.ok, `expected success, got ${JSON.stringify(result)}`);
  return result.target;
};
const failedPaths = (result: ReturnType<typeof patchTarget>): string[] => {
  assert.ok(!result.ok, 'expected violations');
  return result.violations.map((v) => v.path).sort();
};

test('changing only platform_config.password keeps host, port and stream_id', () => {
  const target = ok(patchTarget(zixiTarget, { platform: 'Pluto TV', target_protocol: 'zixi', platform_config: { password: 'new-pw' } }, noProfiles));
  assert.deepEqual(target.platform_config, { host: 'zixi.example.net', port: 2088, password: 'new-pw', stream_id: 'sid-1' });
  assert.equal(target.description, 'Pluto feed');
});

test('null removes a key, and the merged result is validated whole', () => {
  const withType = ok(patchTarget(zixiTarget, { platform: 'Pluto TV', target_protocol: 'zixi', platform_config: { type: 'push' } }, noProfiles));
  assert.equal(withType.platform_config?.type, 'push');
  const without = ok(patchTarget(withType, { platform: 'Pluto TV', target_protocol: 'zixi', platform_config: { type: null } }, noProfiles));
  assert.equal('type' in (without.platform_config ?? {}), false);
  const result = patchTarget(zixiTarget, { platform: 'Pluto TV', target_protocol: 'zixi', platform_config: { host: null } }, noProfiles);
  assert.deepEqual(failedPaths(result), ['/platform_config/host']);
});

test('switching platform with leftover keys of the old platform names each of them', () => {
  const result = patchTarget(zixiTarget, { platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_abc' }, noProfiles);
  assert.deepEqual(failedPaths(result), ['/platform_config/host', '/platform_config/password', '/platform_config/port', '/platform_config/stream_id']);
  const cleared = patchTarget(
    zixiTarget,
    { platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_abc', platform_config: { host: null, port: null, password: null, stream_id: null } },
    noProfiles,
  );
  assert.deepEqual(ok(cleared), { description: 'Pluto feed', platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_abc', platform_config: {} });
});

test('switching to a zixi platform with a leftover stream key names target_stream; null removes it', () => {
  const twitch: TargetCreateBody = { platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_abc' };
  const config = { host: 'h.example', port: 2088, password: 'p', stream_id: 's' };
  assert.deepEqual(failedPaths(patchTarget(twitch, { platform: 'Pluto TV', target_protocol: 'zixi', platform_config: config }, noProfiles)), ['/target_stream']);
  const moved = ok(patchTarget(twitch, { platform: 'Pluto TV', target_protocol: 'zixi', target_stream: null, platform_config: config }, noProfiles));
  assert.equal(moved.target_stream, undefined);
});

test('platform and target_protocol are required, reported with any other violation', () => {
  const result = patchTarget(zixiTarget, { platform_config: { port: 0 } }, noProfiles);
  assert.deepEqual(failedPaths(result), ['/platform', '/platform_config/port', '/target_protocol']);
});

test('secrets sent back masked keep the stored values; a mask with nothing stored is rejected', () => {
  const kept = ok(
    patchTarget(zixiTarget, { platform: 'Pluto TV', target_protocol: 'zixi', description: 'renamed', platform_config: { password: '********', stream_id: '********' } }, noProfiles),
  );
  assert.equal(kept.platform_config?.password, 'old-pw');
  assert.equal(kept.platform_config?.stream_id, 'sid-1');
  assert.equal(kept.description, 'renamed');
  const twitch: TargetCreateBody = { platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_abc' };
  assert.equal(ok(patchTarget(twitch, { platform: 'Twitch', target_protocol: 'rtmp', target_stream: '********' }, noProfiles)).target_stream, 'live_abc');
  const noStream: TargetCreateBody = { platform: 'Custom', target_protocol: 'hls' };
  const bad = patchTarget(noStream, { platform: 'Custom', target_protocol: 'zixi', platform_config: { host: 'h.example', port: 2088, password: '********', stream_id: 's' } }, noProfiles);
  assert.deepEqual(failedPaths(bad), ['/platform_config/password']);
});

test('unknown members of a PATCH are named; read-only members are ignored', () => {
  const result = patchTarget(zixiTarget, { id: 'x', status: 'active', platform: 'Pluto TV', target_protocol: 'zixi', color: 'red' }, noProfiles);
  assert.deepEqual(failedPaths(result), ['/color']);
});
