import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../platform/errors.js';
import { planPush, scrub, secretsOfPlan } from './push-plan.js';
import { parsePlatformIngest } from './syndication.module.js';

const unavailable = (pattern: RegExp) => (err: unknown) => err instanceof AppError && err.code === 'publishing_unavailable' && pattern.test(err.detail);

test('Custom RTMP URLs split as ffmpeg splits them: the last segment is the key, the rest the application', () => {
  assert.deepEqual(planPush({ platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://ingest.example/live/key1' }, {}), {
    kind: 'rtmp', tls: false, host: 'ingest.example', port: 1935, app: 'live', streamName: 'key1',
  });
  assert.deepEqual(planPush({ platform: 'Custom', target_protocol: 'rtmps', target_stream: 'rtmps://[::1]:4443/app/inst/key?auth=x' }, {}), {
    kind: 'rtmp', tls: true, host: '::1', port: 4443, app: 'app/inst', streamName: 'key?auth=x',
  });
  assert.deepEqual(planPush({ platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://ingest.example:1936/live2' }, {}), {
    kind: 'rtmp', tls: false, host: 'ingest.example', port: 1936, app: 'live2', streamName: '',
  });
});

test('social platforms push their stream key to the built-in ingest, or the configured one', () => {
  const twitch = { platform: 'Twitch' as const, target_protocol: 'rtmp' as const, target_stream: 'live_123' };
  assert.deepEqual(planPush(twitch, {}), { kind: 'rtmp', tls: false, host: 'live.twitch.tv', port: 1935, app: 'app', streamName: 'live_123' });
  assert.deepEqual(planPush(twitch, { Twitch: 'rtmp://127.0.0.1:19350/app/' }), { kind: 'rtmp', tls: false, host: '127.0.0.1', port: 19350, app: 'app', streamName: 'live_123' });
  assert.deepEqual(planPush({ platform: 'Facebook', target_protocol: 'rtmp', target_stream: 'FB-1' }, {}), { kind: 'rtmp', tls: true, host: 'live-api-s.facebook.com', port: 443, app: 'rtmp', streamName: 'FB-1' });
  assert.throws(() => planPush({ platform: 'TikTok', target_protocol: 'rtmp', target_stream: 'tt' }, {}), unavailable(/PLAYLINE_PLATFORM_INGEST/));
  assert.throws(() => planPush({ platform: 'YouTube', target_protocol: 'rtmp', platform_config: { integrated: true } }, {}), unavailable(/OAuth/));
  assert.throws(() => planPush({ platform: 'Custom', target_protocol: 'zixi', platform_config: { host: 'h', port: 1, password: 'p', stream_id: 's' } }, {}), unavailable(/zixi/));
});

test('SRT and RIST: the address, and every query parameter as an option kept off the command line', () => {
  const plan = planPush({ platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://10.0.0.5:9000?passphrase=abcdefghij&streamid=s1' }, {});
  assert.deepEqual(plan, { kind: 'mpegts', scheme: 'srt', host: '10.0.0.5', port: 9000, options: { passphrase: 'abcdefghij', streamid: 's1' } });
  assert.deepEqual(planPush({ platform: 'Custom', target_protocol: 'rist', target_stream: 'rist://10.0.0.5:9000' }, {}), { kind: 'mpegts', scheme: 'rist', host: '10.0.0.5', port: 9000, options: {} });
  const secrets = secretsOfPlan(plan, { platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://10.0.0.5:9000?passphrase=abcdefghij&streamid=s1' });
  assert.equal(scrub('failed with abcdefghij at srt://10.0.0.5:9000?passphrase=abcdefghij&streamid=s1', secrets), 'failed with ******** at ********');
});

test('PLAYLINE_PLATFORM_INGEST is checked at start', () => {
  assert.deepEqual(parsePlatformIngest('{"Twitch":"rtmp://127.0.0.1:1935/app/"}'), { Twitch: 'rtmp://127.0.0.1:1935/app/' });
  assert.throws(() => parsePlatformIngest('nope'), /not JSON/);
  assert.throws(() => parsePlatformIngest('{"Custom":"rtmp://h/app/"}'), /not a social platform/);
  assert.throws(() => parsePlatformIngest('{"Twitch":"http://h/app/"}'), /rtmp/);
});
