import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ingestParts, KEY_MASK } from '../../src/dashboard/ingest-parts.js';

const KEY = 'Abc_def-0123456789xyz';

test('RTMP: server and stream name apart, as OBS asks for them; the key masked in the URL', () => {
  assert.deepEqual(ingestParts('rtmp', `rtmp://ingest.example:1935/live/${KEY}`), { server: 'rtmp://ingest.example:1935/live', key: KEY, masked: `rtmp://ingest.example:1935/live/${KEY_MASK}` });
});

test('SRT and RIST: the passphrase or secret is the key; the other parameters stay', () => {
  const srt = ingestParts('srt', `srt://[::1]:9000?passphrase=${KEY}&pbkeylen=16`);
  assert.deepEqual(srt, { server: 'srt://[::1]:9000', key: KEY, masked: `srt://[::1]:9000?passphrase=${KEY_MASK}&pbkeylen=16` });
  const rist = ingestParts('rist', `rist://10.0.0.1:8000?secret=${KEY}&aes-type=128`);
  assert.equal(rist.key, KEY);
  assert.equal(rist.masked.includes(KEY), false);
});

test('hls push: the key is the path segment before index.m3u8', () => {
  const url = `http://h:8080/ingest/hls/ws1/s1/${KEY}/index.m3u8`;
  assert.deepEqual(ingestParts('hls', url), { server: 'http://h:8080/ingest/hls/ws1/s1/', key: KEY, masked: `http://h:8080/ingest/hls/ws1/s1/${KEY_MASK}/index.m3u8` });
});

test('a URL of an unknown form is shown as it is, with no key to reveal', () => {
  assert.deepEqual(ingestParts('zixi', 'zixi://h:2088'), { server: 'zixi://h:2088', key: null, masked: 'zixi://h:2088' });
  // The masked form never carries the key, whatever the protocol.
  for (const [p, u] of [['rtmp', `rtmp://h:1/live/${KEY}`], ['srt', `srt://h:1?passphrase=${KEY}`], ['hls', `http://h/ingest/hls/a/b/${KEY}/index.m3u8`]] as const) assert.equal(ingestParts(p, u).masked.includes(KEY), false, p);
});
