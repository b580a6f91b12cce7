import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSyndicationTestApp, type SyndicationTestApp } from './syndication.test-support.js';

const M = '********';
/** The fields of the spec's SyndicationTarget response table: every response carries all of them. */
const SPEC_FIELDS = ['@id', '@type', 'description', 'id', 'platform', 'platform_config', 'status', 'target_protocol', 'target_stream'];
const zixiConfig = { host: 'zixi.example.net', port: 2088, password: 'pw-CLEAR', stream_id: 'sid-CLEAR' };
const zixiShown = { host: 'zixi.example.net', password: M, port: 2088, remote_id: '', stream_id: M, type: 'push' };
const plainShown = { remote_id: '', type: 'push' };

type Json = Record<string, unknown>;

describe('publishing target responses carry every field of the spec table (13.9)', () => {
  let s: SyndicationTestApp;
  let profileId = '';
  before(async () => {
    s = await createSyndicationTestApp();
    profileId = (await s.api.createClippingProfile({ description: 'fb', integrations: [{ service: 'Facebook', account: 'page' }] })).id;
  });
  after(() => s.close());

  const send = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> => {
    const response = await s.client.core.send(method, `/api/v4${path}`, body === undefined ? {} : { body });
    return { status: response.status, json: JSON.parse(response.body) as Json };
  };

  /** [name, create body, target_stream shown, platform_config shown] for every platform and every Custom protocol. */
  const kinds = (): [string, Json, string, Json][] => [
    ['Facebook, stream key', { platform: 'Facebook', target_protocol: 'rtmp', target_stream: 'fb-key', platform_config: { re_schedule: true } }, M,
      { clipping_profile_id: '', integrated: false, page_id: '', re_schedule: true, remote_id: '', type: 'push' }],
    ['Facebook, integrated', { platform: 'Facebook', target_protocol: 'rtmp', platform_config: { integrated: true, page_id: '42', clipping_profile_id: profileId } }, '',
      { clipping_profile_id: profileId, integrated: true, page_id: '42', re_schedule: false, remote_id: '', type: 'push' }],
    ['YouTube', { platform: 'YouTube', target_protocol: 'rtmp', target_stream: 'yt-key' }, M, { clipping_profile_id: '', integrated: false, remote_id: '', type: 'push' }],
    ['TikTok', { platform: 'TikTok', target_protocol: 'rtmp', target_stream: 'tt-key' }, M, plainShown],
    ['Twitch', { platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'tw-key' }, M, plainShown],
    ['AWS Elemental MediaConnect', { platform: 'AWS Elemental MediaConnect', target_protocol: 'zixi', platform_config: zixiConfig }, '', zixiShown],
    ['Pluto TV', { platform: 'Pluto TV', target_protocol: 'zixi', platform_config: zixiConfig }, '', zixiShown],
    ['Custom rtmp', { platform: 'Custom', target_protocol: 'rtmp', target_stream: 'rtmp://live.example.com/streamkey' }, M, plainShown],
    ['Custom rtmps', { platform: 'Custom', target_protocol: 'rtmps', target_stream: 'rtmps://live.example.com/app/key' }, M, plainShown],
    ['Custom hls (pull)', { platform: 'Custom', target_protocol: 'hls' }, '', plainShown],
    ['Custom hls-push', { platform: 'Custom', target_protocol: 'hls-push', target_stream: 'https://origin.example.com/push/' }, M, plainShown],
    ['Custom zixi', { platform: 'Custom', target_protocol: 'zixi', platform_config: { ...zixiConfig, type: 'push' } }, '', zixiShown],
    ['Custom srt', { platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://srt.example.com:9000' }, M, plainShown],
    ['Custom rist', { platform: 'Custom', target_protocol: 'rist', target_stream: 'rist://rist.example.com:5000' }, M, plainShown],
  ];

  test('POST, GET, list and PATCH show every field, for every platform and every Custom protocol', async () => {
    const listed = new Map<string, Json>();
    const created: [string, Json][] = [];
    for (const [name, body, stream, config] of kinds()) {
      const post = await send('POST', '/syndication-target', body);
      assert.equal(post.status, 201, `${name}: ${JSON.stringify(post.json)}`);
      const id = String(post.json.id);
      const expected = {
        '@id': `/api/v4/syndication-target/${id}`,
        '@type': 'SyndicationTarget',
        id,
        description: '',
        platform: body.platform,
        target_protocol: body.target_protocol,
        target_stream: stream,
        status: 'stopped',
        platform_config: config,
      };
      assert.deepEqual(Object.keys(post.json).sort(), SPEC_FIELDS, name);
      assert.deepEqual(post.json, expected, name);
      assert.deepEqual((await send('GET', `/syndication-target/${id}`)).json, expected, name);
      created.push([name, expected]);
    }
    for (const item of (await send('GET', '/syndication-target')).json.items as Json[]) listed.set(String(item.id), item);
    for (const [name, expected] of created) assert.deepEqual(listed.get(String(expected.id)), expected, `${name} in the list`);
  });

  test('a GET response sent back unchanged as the PATCH body changes nothing, secrets included', async () => {
    for (const [name, body] of kinds()) {
      const post = await send('POST', '/syndication-target', { ...body, description: `round trip ${name}` });
      const id = String(post.json.id);
      const shown = (await send('GET', `/syndication-target/${id}`)).json;
      const before = await s.module.targets.openForPublishing(s.t.workspace.id, id);
      const patched = await send('PATCH', `/syndication-target/${id}`, shown);
      assert.equal(patched.status, 200, `${name}: ${JSON.stringify(patched.json)}`);
      assert.deepEqual(patched.json, shown, name);
      const after = (await s.module.targets.openForPublishing(s.t.workspace.id, id)).target;
      const secrets = (t: typeof after) => [t.target_stream, t.platform_config?.password, t.platform_config?.stream_id];
      assert.deepEqual(secrets(after), secrets(before.target), `${name}: the masks kept the stored secrets`);
      assert.deepEqual((await send('GET', `/syndication-target/${id}`)).json, shown, name);
    }
  });

  test('a Custom hls target shows "" until a schedule starts, then the generated pull URL', async () => {
    const target = await s.api.createTarget({ platform: 'Custom', target_protocol: 'hls' });
    assert.equal(target.target_stream, '');
    const [region] = s.module.regions;
    const schedule = await s.api.createSchedule({ syndication_target_id: target.id, content_id: 'event-9', content_type: 'e', region: region ?? '' });
    assert.equal((await s.api.getTarget(target.id)).target_stream, '', 'a schedule alone publishes nothing');
    await s.api.scheduleAction(schedule.id, 'start');
    const shown = await s.api.getTarget(target.id);
    assert.match(shown.target_stream, new RegExp(`^http://[^/]+/syndication-pull/${target.id}/[0-9a-f]{32}/playlist\\.m3u8$`));
    assert.equal(shown.status, 'active');
  });
});
