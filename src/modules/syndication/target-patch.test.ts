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
const failures = (result: ReturnType<typeof patchTarget>): [string, string][] => {
  assert.ok(!result.ok, 'expected violations');
  return result.violations.map((v): [string, string] => [v.path, v.message]).sort((a, b) => a[0].localeCompare(b[0]));
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

const profiles: Record<string, { integrations: { service: string }[] }> = {
  'cp-fb': { integrations: [{ service: 'Facebook' }] },
  'cp-both': { integrations: [{ service: 'Facebook' }, { service: 'YouTube' }] },
};
const withProfiles: ClippingProfileLookup = (id) => profiles[id];
const customRtmp: TargetCreateBody = { description: 'ingest', platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://live.example.com/app/key-1', platform_config: { type: 'push' } };
const zixiConfig = { host: 'zixi.example.net', port: 2088, password: 'pw-2', stream_id: 'sid-2' };

test('Custom RTMP -> Pluto TV with a full zixi platform_config: the stream URL is dropped, not reported (13.6)', () => {
  const moved = ok(patchTarget(customRtmp, { platform: 'Pluto TV', target_protocol: 'zixi', platform_config: zixiConfig }, noProfiles));
  assert.deepEqual(moved, { description: 'ingest', platform: 'Pluto TV', target_protocol: 'zixi', platform_config: { type: 'push', ...zixiConfig } });
});

test('Pluto TV -> TikTok with a stream key: the zixi keys are dropped, not reported (13.6)', () => {
  const moved = ok(patchTarget(zixiTarget, { platform: 'TikTok', target_protocol: 'rtmp', target_stream: 'tt-key' }, noProfiles));
  assert.deepEqual(moved, { description: 'Pluto feed', platform: 'TikTok', target_protocol: 'rtmp', target_stream: 'tt-key', platform_config: {} });
});

test('another kind keeps what belongs to it: a stream key stays a stream key, zixi keys stay zixi keys', () => {
  const twitch: TargetCreateBody = { platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_abc' };
  assert.equal(ok(patchTarget(twitch, { platform: 'TikTok', target_protocol: 'rtmp' }, noProfiles)).target_stream, 'live_abc');
  const custom = ok(patchTarget(zixiTarget, { platform: 'Custom', target_protocol: 'zixi', platform_config: { password: '********' } }, noProfiles));
  assert.deepEqual(custom.platform_config, zixiTarget.platform_config);
});

test('another kind drops a stream of another form: the request is told what is missing, nothing else', () => {
  assert.deepEqual(failures(patchTarget(customRtmp, { platform: 'Twitch', target_protocol: 'rtmp' }, noProfiles)), [['/target_stream', 'is required (a stream key)']]);
  assert.deepEqual(failures(patchTarget(customRtmp, { platform: 'Custom', target_protocol: 'rtmps' }, noProfiles)), [
    ['/target_stream', 'is required (rtmps://host[:port]/<path>[/<key>])'],
  ]);
  // A mask stands for the stored secret only while it is kept.
  assert.deepEqual(failures(patchTarget(customRtmp, { platform: 'Twitch', target_protocol: 'rtmp', target_stream: '********' }, noProfiles)), [
    ['/target_stream', 'is the masked placeholder, not a value'],
  ]);
});

test('Facebook -> YouTube keeps integrated, drops page_id and re_schedule, keeps a profile only if it can publish to YouTube', () => {
  const facebook = (profile: string): TargetCreateBody => ({
    platform: 'Facebook',
    target_protocol: 'rtmp',
    platform_config: { integrated: true, page_id: '42', re_schedule: true, clipping_profile_id: profile },
  });
  const toYouTube = { platform: 'YouTube', target_protocol: 'rtmp' };
  assert.deepEqual(ok(patchTarget(facebook('cp-fb'), toYouTube, withProfiles)).platform_config, { integrated: true });
  assert.deepEqual(ok(patchTarget(facebook('cp-both'), toYouTube, withProfiles)).platform_config, { integrated: true, clipping_profile_id: 'cp-both' });
});

test('only fields the request carries are named as not belonging', () => {
  const result = patchTarget(zixiTarget, { platform: 'Twitch', target_protocol: 'rtmp', platform_config: { host: 'h.example' } }, noProfiles);
  assert.deepEqual(failures(result), [
    ['/platform_config/host', 'does not belong to Twitch over rtmp'],
    ['/target_stream', 'is required (a stream key)'],
  ]);
});

test("a protocol the platform does not take keeps the platform's own fields and reports the protocol alone", () => {
  assert.deepEqual(failures(patchTarget(zixiTarget, { platform: 'Pluto TV', target_protocol: 'rtmp' }, noProfiles)), [['/target_protocol', 'must be zixi for Pluto TV']]);
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
