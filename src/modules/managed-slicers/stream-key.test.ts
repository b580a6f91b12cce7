import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InMemorySlicerStore } from './memory-slicer-store.test-support.js';
import { slicerBody, streamKeysOf, testBox } from './slicer-fixtures.test-support.js';
import { ingestUrlWithKey, newStreamKey, STREAM_KEY_PATTERN } from './stream-key.js';

const KEY = 'AbC_-0123456789abcdefghijklmnopq';

test('a stream key is 32 characters of URL-safe base64 from 24 random bytes, a new one each time', () => {
  const keys = new Set(Array.from({ length: 200 }, () => newStreamKey()));
  assert.equal(keys.size, 200);
  for (const key of keys) {
    assert.match(key, STREAM_KEY_PATTERN);
    assert.equal(Buffer.from(key, 'base64url').length, 24);
    assert.equal(encodeURIComponent(key), key, 'goes into a URL unescaped');
  }
  assert.match(KEY, STREAM_KEY_PATTERN);
});

test('the ingest URL carries the key where each protocol checks it', () => {
  assert.equal(ingestUrlWithKey('srt', 'srt://203.0.113.5:20000', KEY), `srt://203.0.113.5:20000?passphrase=${KEY}&pbkeylen=16`);
  assert.equal(ingestUrlWithKey('rist', 'rist://203.0.113.5:20002', KEY), `rist://203.0.113.5:20002?secret=${KEY}&aes-type=128`);
  assert.equal(ingestUrlWithKey('rtmp', 'rtmp://203.0.113.5:20001/live', KEY), `rtmp://203.0.113.5:20001/live/${KEY}`);
  assert.equal(
    ingestUrlWithKey('hls', 'http://203.0.113.5:8080/ingest/hls/ws1/s1', KEY),
    `http://203.0.113.5:8080/ingest/hls/ws1/s1/${KEY}/index.m3u8`,
  );
  assert.equal(ingestUrlWithKey('srt', 'srt://[2001:db8::5]:20000', KEY), `srt://[2001:db8::5]:20000?passphrase=${KEY}&pbkeylen=16`);
  assert.equal(ingestUrlWithKey('rtmp', 'rtmp://[2001:db8::5]:20001/live', KEY), `rtmp://[2001:db8::5]:20001/live/${KEY}`);
});

test('URLs stored before stream keys: the slicer id (RTMP) and the token (hls push) give way to the key', () => {
  const slicerId = 'a'.repeat(32);
  assert.equal(ingestUrlWithKey('rtmp', `rtmp://h:20001/live/${slicerId}`, KEY), `rtmp://h:20001/live/${KEY}`);
  assert.equal(
    ingestUrlWithKey('hls', `http://h:8080/ingest/hls/ws1/${slicerId}/tokenTOKENtoken/index.m3u8`, KEY),
    `http://h:8080/ingest/hls/ws1/${slicerId}/${KEY}/index.m3u8`,
  );
  // The simulated provisioner's old shapes.
  assert.equal(ingestUrlWithKey('srt', 'srt://eu.ingest.playline.invalid:9000?streamid=s1', KEY), `srt://eu.ingest.playline.invalid:9000?streamid=s1&passphrase=${KEY}&pbkeylen=16`);
  assert.equal(ingestUrlWithKey('hls', 'https://eu.ingest.playline.invalid/push/s1/', KEY), `https://eu.ingest.playline.invalid/push/s1/${KEY}/index.m3u8`);
});

test('no URL stays none; zixi is unchanged; a URL of the previous protocol (UPDATE not done) is keyed for that protocol', () => {
  for (const protocol of ['srt', 'rist', 'rtmp', 'hls', 'zixi'] as const) assert.equal(ingestUrlWithKey(protocol, null, KEY), null);
  assert.equal(ingestUrlWithKey('zixi', 'zixi://h:2088/s1', KEY), 'zixi://h:2088/s1');
  assert.equal(ingestUrlWithKey('rtmp', 'srt://h:20000', KEY), `srt://h:20000?passphrase=${KEY}&pbkeylen=16`);
  assert.equal(ingestUrlWithKey('srt', 'rtmp://h:20001/live', KEY), `rtmp://h:20001/live/${KEY}`);
});

test('keys are stored sealed; a slicer without one gets one the first time it is needed, and keeps it', async () => {
  const store = new InMemorySlicerStore();
  const keys = streamKeysOf(store);
  const sealed = keys.sealNew();
  const clear = testBox.open(sealed);
  assert.match(clear, STREAM_KEY_PATTERN);
  assert.ok(!sealed.includes(clear), 'sealed, not encoded');
  assert.notEqual(keys.sealNew(), keys.sealNew());

  const { slicer } = await store.createSlicer(
    { id: 's1', workspaceId: 'w1', config: slicerBody(), createdAt: 0, sealedStreamKey: sealed },
    { id: 't1', operation: 'CREATE', createdAt: 0 },
  );
  assert.equal(await keys.keyOf(slicer), clear);
  assert.equal(await keys.keyOfSlicer('s1'), clear);

  store.forgetStreamKey('s1');
  const made = await keys.keyOfSlicer('s1');
  assert.match(made ?? '', STREAM_KEY_PATTERN);
  assert.notEqual(made, clear);
  const stored = await store.streamKeyOf('s1');
  assert.ok(stored && !stored.includes(made ?? '-'), 'the made key is stored sealed');
  assert.equal(await keys.keyOf({ id: 's1', sealedStreamKey: null }), made, 'a reader that saw no key gets the stored one');
  assert.equal(await keys.keyOfSlicer('gone'), undefined);
  assert.equal(await keys.keyOf({ id: 'gone', sealedStreamKey: null }), undefined);
});
