import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTarget, platformTable, targetValidationError, validateTarget, type ClippingProfileLookup } from './platform-rules.js';
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

const broken: [string, Body, string[]][] = [
  ['Facebook wrong protocol', { platform: 'Facebook', target_protocol: 'rtmps', target_stream: KEY }, ['/target_protocol']],
  ['Facebook no key, not integrated', { platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: false } }, ['/target_stream']],
  ['Facebook integrated without page_id', { platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: true } }, ['/platform_config/page_id']],
  ['Facebook profile without integrated', { platform: 'Facebook', target_protocol: 'rtmp', target_stream: KEY, platform_config: { clipping_profile_id: 'cp-fb' } }, ['/platform_config/clipping_profile_id']],
  ['Facebook unknown profile', { platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: true, page_id: '1', clipping_profile_id: 'nope' } }, ['/platform_config/clipping_profile_id']],
  ['Facebook incompatible profile', { platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: true, page_id: '1', clipping_profile_id: 'cp-yt' } }, ['/platform_config/clipping_profile_id']],
  ['Facebook zixi key', { platform: 'Facebook', target_protocol: 'rtmp', target_stream: KEY, platform_config: { host: 'a.example' } }, ['/platform_config/host']],
  ['YouTube re_schedule', { platform: 'YouTube', target_protocol: 'rtmp', target_stream: KEY, platform_config: { re_schedule: true } }, ['/platform_config/re_schedule']],
  ['YouTube page_id', { platform: 'YouTube', target_protocol: 'rtmp', platform_config: { integrated: true, page_id: '1' } }, ['/platform_config/page_id']],
  ['YouTube no key', { platform: 'YouTube', target_protocol: 'rtmp' }, ['/target_stream']],
  ['TikTok integrated', { platform: 'TikTok', target_protocol: 'rtmp', target_stream: KEY, platform_config: { integrated: true } }, ['/platform_config/integrated']],
  ['TikTok key with whitespace', { platform: 'TikTok', target_protocol: 'rtmp', target_stream: 'a SECRET key' }, ['/target_stream']],
  ['Twitch zixi', { platform: 'Twitch', target_protocol: 'zixi', target_stream: KEY }, ['/target_protocol']],
  ['Twitch masked placeholder', { platform: 'Twitch', target_protocol: 'rtmp', target_stream: '********' }, ['/target_stream']],
  ['MediaConnect nothing', { platform: 'AWS Elemental MediaConnect', target_protocol: 'zixi' }, ['/platform_config/host', '/platform_config/port', '/platform_config/password', '/platform_config/stream_id']],
  ['MediaConnect stream and port 0', { platform: 'AWS Elemental MediaConnect', target_protocol: 'zixi', target_stream: KEY, platform_config: { ...zixiConfig, port: 0 } }, ['/target_stream', '/platform_config/port']],
  ['MediaConnect rtmp', { platform: 'AWS Elemental MediaConnect', target_protocol: 'rtmp', platform_config: zixiConfig }, ['/target_protocol']],
  ['Pluto TV bad host, port, password', { platform: 'Pluto TV', target_protocol: 'zixi', platform_config: { ...zixiConfig, host: 'not a host', port: 65536, password: '' } }, ['/platform_config/host', '/platform_config/port', '/platform_config/password']],
  ['Custom rtmp wrong scheme', { platform: 'Custom', target_protocol: 'rtmp', target_stream: `rtmps://h.example/live/${KEY}` }, ['/target_stream']],
  ['Custom rtmp no path', { platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://h.example' }, ['/target_stream']],
  ['Custom rtmp root path', { platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://h.example:1935/' }, ['/target_stream']],
  ['Custom rtmps empty segment', { platform: 'Custom', target_protocol: 'rtmps', target_stream: `rtmps://h.example//${KEY}` }, ['/target_stream']],
  ['Custom rtmp port 70000', { platform: 'Custom', target_protocol: 'rtmp', target_stream: `rtmp://h.example:70000/live/${KEY}` }, ['/target_stream']],
  ['Custom rtmp no host', { platform: 'Custom', target_protocol: 'rtmp', target_stream: `rtmp:///live/${KEY}` }, ['/target_stream']],
  ['Custom rtmp missing', { platform: 'Custom', target_protocol: 'rtmp' }, ['/target_stream']],
  ['Custom rtmps plain scheme', { platform: 'Custom', target_protocol: 'rtmps', target_stream: `rtmp://h.example/live/${KEY}` }, ['/target_stream']],
  ['Custom hls with stream', { platform: 'Custom', target_protocol: 'hls', target_stream: 'http://h.example/' }, ['/target_stream']],
  ['Custom hls-push no slash', { platform: 'Custom', target_protocol: 'hls-push', target_stream: 'https://h.example/push' }, ['/target_stream']],
  ['Custom hls-push ftp', { platform: 'Custom', target_protocol: 'hls-push', target_stream: 'ftp://h.example/push/' }, ['/target_stream']],
  ['Custom zixi missing stream_id, with stream', { platform: 'Custom', target_protocol: 'zixi', target_stream: KEY, platform_config: { ...zixiConfig, stream_id: undefined } }, ['/target_stream', '/platform_config/stream_id']],
  ['Custom zixi keys over srt', { platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://h.example:9000', platform_config: zixiConfig }, ['/platform_config/host', '/platform_config/port', '/platform_config/password', '/platform_config/stream_id']],
  ['Custom srt no port', { platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://h.example' }, ['/target_stream']],
  ['Custom srt with path', { platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://h.example:9000/live' }, ['/target_stream']],
  ['Custom rist odd port', { platform: 'Custom', target_protocol: 'rist', target_stream: 'rist://h.example:5001' }, ['/target_stream']],
  ['Custom rist no port', { platform: 'Custom', target_protocol: 'rist', target_stream: 'rist://h.example' }, ['/target_stream']],
  ['unknown platform (case)', { platform: 'facebook', target_protocol: 'rtmp', target_stream: KEY }, ['/platform']],
  ['unknown protocol', { platform: 'Custom', target_protocol: 'webrtc' }, ['/target_protocol']],
  ['missing platform and protocol', { target_stream: KEY }, ['/platform', '/target_protocol']],
  ['type pull, unknown keys', { platform: 'Twitch', target_protocol: 'rtmp', target_stream: KEY, owner: 'x', platform_config: { type: 'pull', remote_id: 'r' } }, ['/owner', '/platform_config/type', '/platform_config/remote_id']],
  ['platform_config not an object', { platform: 'Twitch', target_protocol: 'rtmp', target_stream: KEY, platform_config: [] }, ['/platform_config']],
];

const paths = (body: Body) => [...new Set(validateTarget(body, lookup).map((v) => v.path))].sort();

for (const [name, body] of valid) {
  test(`accepts: ${name}`, () => {
    assert.deepEqual(validateTarget(body, lookup), []);
  });
}

for (const [name, body, expected] of broken) {
  test(`rejects: ${name}`, () => {
    const violations = validateTarget(body, lookup);
    assert.deepEqual(paths(body), [...expected].sort());
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
