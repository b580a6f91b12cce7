import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTarget, targetValidationError, validateTarget, type ClippingProfileLookup } from './platform-rules.js';
import { platformTable } from './platform-table.js';
import { platformNames, targetProtocols } from './syndication.schema.js';

const profiles: Record<string, { integrations: { service: string }[] }> = {
  'cp-fb': { integrations: [{ service: 'Facebook' }] },
  'cp-yt': { integrations: [{ service: 'YouTube' }] },
};
const lookup: ClippingProfileLookup = (id) => profiles[id];

const KEY = 'live_1234_SECRETkey';
const zixiConfig = { host: 'zixi.example.net', port: 2088, password: 'pw-SECRET', stream_id: 'sid-SECRET' };
type Body = Record<string, unknown>;

const valid: [string, Body][] = [
  ['Facebook stream key', { platform: 'Facebook', target_protocol: 'rtmp', target_stream: KEY, platform_config: { re_schedule: true, type: 'push' } }],
  ['Facebook integrated', { platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: true, page_id: '1234' } }],
  ['Facebook integrated with profile', { platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: true, page_id: '1', clipping_profile_id: 'cp-fb' } }],
  ['YouTube stream key', { platform: 'YouTube', target_protocol: 'rtmp', target_stream: KEY, description: 'main channel' }],
  ['YouTube integrated with profile', { platform: 'YouTube', target_protocol: 'rtmp', platform_config: { integrated: true, clipping_profile_id: 'cp-yt' } }],
  ['TikTok', { platform: 'TikTok', target_protocol: 'rtmp', target_stream: KEY }],
  ['Twitch', { platform: 'Twitch', target_protocol: 'rtmp', target_stream: KEY, platform_config: {} }],
  ['MediaConnect', { platform: 'AWS Elemental MediaConnect', target_protocol: 'zixi', platform_config: zixiConfig }],
  ['Pluto TV', { platform: 'Pluto TV', target_protocol: 'zixi', platform_config: { ...zixiConfig, host: '203.0.113.7' } }],
  ['Custom rtmp', { platform: 'Custom', target_protocol: 'rtmp', target_stream: `rtmp://ingest.example.com/live/${KEY}` }],
  ['Custom rtmp, key as the one path segment', { platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://live.example.com/streamkey' }],
  ['Custom rtmp, application only (key elsewhere)', { platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://a.rtmp.youtube.com/live2' }],
  ['Custom rtmp, trailing slash', { platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://a.rtmp.youtube.com/live2/' }],
  ['Custom rtmps, one segment with port', { platform: 'Custom', target_protocol: 'rtmps', target_stream: 'rtmps://live.example.com:443/streamkey' }],
  ['Custom rtmp port, deep path, query', { platform: 'Custom', target_protocol: 'rtmp', target_stream: `rtmp://10.0.0.5:1935/app/inst/${KEY}?s=1` }],
  ['Custom rtmp IPv6', { platform: 'Custom', target_protocol: 'rtmp', target_stream: `rtmp://[2001:db8::1]:1935/live/${KEY}` }],
  ['Custom rtmps', { platform: 'Custom', target_protocol: 'rtmps', target_stream: `rtmps://live-api-s.facebook.com:443/rtmp/${KEY}` }],
  ['Custom hls pull', { platform: 'Custom', target_protocol: 'hls' }],
  ['Custom hls-push http', { platform: 'Custom', target_protocol: 'hls-push', target_stream: 'http://origin.example.com/push/ch1/' }],
  ['Custom hls-push https', { platform: 'Custom', target_protocol: 'hls-push', target_stream: 'https://origin.example.com:8443/' }],
  ['Custom zixi', { platform: 'Custom', target_protocol: 'zixi', platform_config: { ...zixiConfig, type: 'push' } }],
  ['Custom srt', { platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://srt.example.com:9000' }],
  ['Custom srt with options', { platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://198.51.100.4:9000?passphrase=SECRETpass' }],
  ['Custom rist even port', { platform: 'Custom', target_protocol: 'rist', target_stream: 'rist://rist.example.com:5000' }],
  ['read-only members sent back', { '@id': '/x', '@type': 'SyndicationTarget', id: 'x', status: 'stopped', platform: 'TikTok', target_protocol: 'rtmp', target_stream: KEY }],
];

/** Bodies and their exact violations: [path, message], every one of them. */
const broken: [string, Body, [string, string][]][] = [
  ['Facebook wrong protocol', { platform: 'Facebook', target_protocol: 'rtmps', target_stream: KEY }, [['/target_protocol', 'must be rtmp for Facebook']]],
  ['Facebook no key, not integrated', { platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: false } }, [['/target_stream', 'is required (a stream key)']]],
  ['Facebook integrated without page_id', { platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: true } }, [['/platform_config/page_id', 'is required when integrated']]],
  ['Facebook profile without integrated', { platform: 'Facebook', target_protocol: 'rtmp', target_stream: KEY, platform_config: { clipping_profile_id: 'cp-fb' } }, [['/platform_config/clipping_profile_id', 'is allowed only when integrated is true']]],
  ['Facebook unknown profile', { platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: true, page_id: '1', clipping_profile_id: 'nope' } }, [['/platform_config/clipping_profile_id', 'names no clipping profile of this workspace']]],
  ['Facebook incompatible profile', { platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: true, page_id: '1', clipping_profile_id: 'cp-yt' } }, [['/platform_config/clipping_profile_id', 'names a clipping profile without a Facebook integration']]],
  ['Facebook zixi key', { platform: 'Facebook', target_protocol: 'rtmp', target_stream: KEY, platform_config: { host: 'a.example' } }, [['/platform_config/host', 'does not belong to Facebook over rtmp']]],
  ['YouTube re_schedule', { platform: 'YouTube', target_protocol: 'rtmp', target_stream: KEY, platform_config: { re_schedule: true } }, [['/platform_config/re_schedule', 'does not belong to YouTube over rtmp']]],
  ['YouTube page_id', { platform: 'YouTube', target_protocol: 'rtmp', platform_config: { integrated: true, page_id: '1' } }, [['/platform_config/page_id', 'does not belong to YouTube over rtmp']]],
  ['YouTube no key', { platform: 'YouTube', target_protocol: 'rtmp' }, [['/target_stream', 'is required (a stream key)']]],
  ['TikTok integrated', { platform: 'TikTok', target_protocol: 'rtmp', target_stream: KEY, platform_config: { integrated: true } }, [['/platform_config/integrated', 'does not belong to TikTok over rtmp']]],
  ['TikTok key with whitespace', { platform: 'TikTok', target_protocol: 'rtmp', target_stream: 'a SECRET key' }, [['/target_stream', 'must be a stream key without whitespace']]],
  ['Twitch zixi', { platform: 'Twitch', target_protocol: 'zixi', target_stream: KEY }, [['/target_protocol', 'must be rtmp for Twitch']]],
  ['Twitch masked placeholder', { platform: 'Twitch', target_protocol: 'rtmp', target_stream: '********' }, [['/target_stream', 'is the masked placeholder, not a value']]],
  ['MediaConnect nothing', { platform: 'AWS Elemental MediaConnect', target_protocol: 'zixi' }, [['/platform_config/host', 'is required'], ['/platform_config/port', 'is required'], ['/platform_config/password', 'is required'], ['/platform_config/stream_id', 'is required']]],
  ['MediaConnect stream and port 0', { platform: 'AWS Elemental MediaConnect', target_protocol: 'zixi', target_stream: KEY, platform_config: { ...zixiConfig, port: 0 } }, [['/target_stream', 'is not used by AWS Elemental MediaConnect over zixi; remove it'], ['/platform_config/port', 'must be an integer from 1 to 65535']]],
  ['MediaConnect rtmp', { platform: 'AWS Elemental MediaConnect', target_protocol: 'rtmp', platform_config: zixiConfig }, [['/target_protocol', 'must be zixi for AWS Elemental MediaConnect']]],
  ['Pluto TV bad host, port, password', { platform: 'Pluto TV', target_protocol: 'zixi', platform_config: { ...zixiConfig, host: 'not a host', port: 65536, password: '' } }, [['/platform_config/host', 'must be a hostname or an IP address'], ['/platform_config/port', 'must be an integer from 1 to 65535'], ['/platform_config/password', 'must be a non-empty string']]],
  ['Custom rtmp wrong scheme', { platform: 'Custom', target_protocol: 'rtmp', target_stream: `rtmps://h.example/live/${KEY}` }, [['/target_stream', 'must start with rtmp://']]],
  ['Custom rtmp no path', { platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://h.example' }, [['/target_stream', 'must have a path after the host: /<path>[/<key>]']]],
  ['Custom rtmp root path', { platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://h.example:1935/' }, [['/target_stream', 'must have a path after the host: /<path>[/<key>]']]],
  ['Custom rtmps empty segment', { platform: 'Custom', target_protocol: 'rtmps', target_stream: `rtmps://h.example//${KEY}` }, [['/target_stream', 'must have a path after the host: /<path>[/<key>]']]],
  ['Custom rtmp port 70000', { platform: 'Custom', target_protocol: 'rtmp', target_stream: `rtmp://h.example:70000/live/${KEY}` }, [['/target_stream', 'port must be an integer from 1 to 65535']]],
  ['Custom rtmp no host', { platform: 'Custom', target_protocol: 'rtmp', target_stream: `rtmp:///live/${KEY}` }, [['/target_stream', 'must name a valid host']]],
  ['Custom rtmp missing', { platform: 'Custom', target_protocol: 'rtmp' }, [['/target_stream', 'is required (rtmp://host[:port]/<path>[/<key>])']]],
  ['Custom rtmps plain scheme', { platform: 'Custom', target_protocol: 'rtmps', target_stream: `rtmp://h.example/live/${KEY}` }, [['/target_stream', 'must start with rtmps://']]],
  ['Custom hls with stream', { platform: 'Custom', target_protocol: 'hls', target_stream: 'http://h.example/' }, [['/target_stream', 'is not used by Custom over hls; remove it']]],
  ['Custom hls-push no slash', { platform: 'Custom', target_protocol: 'hls-push', target_stream: 'https://h.example/push' }, [['/target_stream', 'must end with / (the base URL the segments are pushed under)']]],
  ['Custom hls-push ftp', { platform: 'Custom', target_protocol: 'hls-push', target_stream: 'ftp://h.example/push/' }, [['/target_stream', 'must start with http:// or https://']]],
  ['Custom zixi missing stream_id, with stream', { platform: 'Custom', target_protocol: 'zixi', target_stream: KEY, platform_config: { ...zixiConfig, stream_id: undefined } }, [['/target_stream', 'is not used by Custom over zixi; remove it'], ['/platform_config/stream_id', 'is required']]],
  ['Custom zixi keys over srt', { platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://h.example:9000', platform_config: zixiConfig }, [['/platform_config/host', 'does not belong to Custom over srt'], ['/platform_config/port', 'does not belong to Custom over srt'], ['/platform_config/password', 'does not belong to Custom over srt'], ['/platform_config/stream_id', 'does not belong to Custom over srt']]],
  ['Custom srt no port', { platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://h.example' }, [['/target_stream', 'must give a port (host:port)']]],
  ['Custom srt with path', { platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://h.example:9000/live' }, [['/target_stream', 'must not have a path (host:port only)']]],
  ['Custom rist odd port', { platform: 'Custom', target_protocol: 'rist', target_stream: 'rist://h.example:5001' }, [['/target_stream', 'port must be even (the next odd port carries error correction)']]],
  ['Custom rist no port', { platform: 'Custom', target_protocol: 'rist', target_stream: 'rist://h.example' }, [['/target_stream', 'must give a port (host:port)']]],
  ['unknown platform (case)', { platform: 'facebook', target_protocol: 'rtmp', target_stream: KEY }, [['/platform', 'must be one of: Facebook, YouTube, TikTok, Twitch, AWS Elemental MediaConnect, Pluto TV, Custom (case-sensitive)']]],
  ['unknown protocol', { platform: 'Custom', target_protocol: 'webrtc' }, [['/target_protocol', 'must be one of: rtmp, rtmps, hls, hls-push, zixi, srt, rist']]],
  ['missing platform and protocol', { target_stream: KEY }, [['/platform', 'is required'], ['/target_protocol', 'is required']]],
  ['type pull, unknown keys', { platform: 'Twitch', target_protocol: 'rtmp', target_stream: KEY, owner: 'x', platform_config: { type: 'pull', colour: 'red' } }, [['/owner', 'is not a field of a publishing target'], ['/platform_config/type', 'must be "push"'], ['/platform_config/colour', 'is not a platform_config key']]],
  ['remote_id that is not a string', { platform: 'Twitch', target_protocol: 'rtmp', target_stream: KEY, platform_config: { remote_id: 7 } }, [['/platform_config/remote_id', 'must be a string (reserved for future use; ignored)']]],
  ['platform_config not an object', { platform: 'Twitch', target_protocol: 'rtmp', target_stream: KEY, platform_config: [] }, [['/platform_config', 'must be an object']]],
  // Requirements of a platform apply whatever protocol was sent (issue 13.7).
  ['Pluto TV over rtmp, with a key of another platform (the issue\'s body)', { platform: 'Pluto TV', target_protocol: 'rtmp', platform_config: { host: 'h', re_schedule: true } }, [
    ['/target_protocol', 'must be zixi for Pluto TV'],
    ['/platform_config/re_schedule', 'does not belong to Pluto TV'],
    ['/platform_config/port', 'is required'],
    ['/platform_config/password', 'is required'],
    ['/platform_config/stream_id', 'is required'],
  ]],
  ['MediaConnect without a protocol', { platform: 'AWS Elemental MediaConnect', platform_config: { host: 'h.example' } }, [
    ['/target_protocol', 'is required'],
    ['/platform_config/port', 'is required'],
    ['/platform_config/password', 'is required'],
    ['/platform_config/stream_id', 'is required'],
  ]],
  ['Pluto TV over an unknown protocol, with a stream', { platform: 'Pluto TV', target_protocol: 'webrtc', target_stream: KEY }, [
    ['/target_protocol', 'must be one of: rtmp, rtmps, hls, hls-push, zixi, srt, rist'],
    ['/target_stream', 'is not used by Pluto TV; remove it'],
    ['/platform_config/host', 'is required'],
    ['/platform_config/port', 'is required'],
    ['/platform_config/password', 'is required'],
    ['/platform_config/stream_id', 'is required'],
  ]],
  ['Twitch over zixi without a key', { platform: 'Twitch', target_protocol: 'zixi' }, [['/target_protocol', 'must be rtmp for Twitch'], ['/target_stream', 'is required (a stream key)']]],
  ['Facebook over rtmps, integrated without page_id', { platform: 'Facebook', target_protocol: 'rtmps', platform_config: { integrated: true } }, [
    ['/target_protocol', 'must be rtmp for Facebook'],
    ['/platform_config/page_id', 'is required when integrated'],
  ]],
  ['Custom over an unknown protocol: no delivery in common, so only the protocol', { platform: 'Custom', target_protocol: 'webrtc', target_stream: KEY, platform_config: zixiConfig }, [
    ['/target_protocol', 'must be one of: rtmp, rtmps, hls, hls-push, zixi, srt, rist'],
  ]],
  ['unknown platform: values still checked', { platform: 'Periscope', target_protocol: 'rtmp', target_stream: KEY, platform_config: { port: 0, re_schedule: 'yes' } }, [
    ['/platform', 'must be one of: Facebook, YouTube, TikTok, Twitch, AWS Elemental MediaConnect, Pluto TV, Custom (case-sensitive)'],
    ['/platform_config/port', 'must be an integer from 1 to 65535'],
    ['/platform_config/re_schedule', 'must be true or false'],
  ]],
];

const paths = (body: Body) => [...new Set(validateTarget(body, lookup).map((v) => v.path))].sort();
const sorted = (list: [string, string][]) => [...list].sort((a, b) => `${a[0]} ${a[1]}`.localeCompare(`${b[0]} ${b[1]}`));

for (const [name, body] of valid) {
  test(`accepts: ${name}`, () => {
    assert.deepEqual(validateTarget(body, lookup), []);
  });
}

for (const [name, body, expected] of broken) {
  test(`rejects: ${name}`, () => {
    const violations = validateTarget(body, lookup);
    assert.deepEqual(sorted(violations.map((v) => [v.path, v.message])), sorted(expected));
    const text = JSON.stringify(violations);
    for (const secret of [KEY, 'SECRET', 'pw-SECRET']) assert.ok(!text.includes(secret), `violation quotes a secret: ${text}`);
  });
}

test('the cases cover every platform row and every Custom protocol, valid and broken', () => {
  const customProtocols = (cases: Body[]) => new Set(cases.filter((b) => b.platform === 'Custom').map((b) => b.target_protocol));
  for (const cases of [valid.map((c) => c[1]), broken.map((c) => c[1])]) {
    const platforms = new Set(cases.map((b) => b.platform));
    for (const p of platformNames) assert.ok(platforms.has(p), `no case for ${p}`);
    const custom = customProtocols(cases);
    for (const p of targetProtocols) assert.ok(custom.has(p), `no Custom ${p} case`);
  }
  assert.deepEqual(Object.keys(platformTable).sort(), [...platformNames].sort());
});

test('one body with three violations reports all three at once', () => {
  const body = { platform: 'Custom', target_protocol: 'rist', target_stream: 'rist://h.example:5001', platform_config: { type: 'pull', host: 'h.example' } };
  assert.deepEqual(paths(body), ['/platform_config/host', '/platform_config/type', '/target_stream']);
  const error = targetValidationError(validateTarget(body, lookup));
  assert.equal(error.code, 'validation_failed');
  assert.equal(error.errors?.length, 3);
  assert.match(error.detail, /\/target_stream/);
});

test('parseTarget keeps the target fields and drops read-only members', () => {
  const parsed = parseTarget({ id: 'x', status: 'error', platform: 'TikTok', target_protocol: 'rtmp', target_stream: KEY }, lookup);
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.target, { platform: 'TikTok', target_protocol: 'rtmp', target_stream: KEY });
  const failed = parseTarget({ platform: 'TikTok', target_protocol: 'rtmp' }, lookup);
  assert.ok(!failed.ok);
  assert.deepEqual(failed.violations.map((v) => v.path), ['/target_stream']);
});
