import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { parsePlaybackQuery, playbackSignature, signPlaybackUrl } from './playback-token.js';

test('a signed URL carries tc, exp, rn, ct, cid, oid, the extras, then sig over exactly the text before &sig=', () => {
  const url = signPlaybackUrl(
    { baseUrl: 'http://edge.example.com/', kind: 'asset', contentId: 'a b', owner: 'ws1', key: 'k3y', expiresAt: 1800000000, params: [['ad', 'pre'], ['ad.x', '1&2']] },
    () => 'n1',
  );
  const [path, query = ''] = url.split('?');
  assert.equal(path, 'http://edge.example.com/play/a%20b.m3u8');
  const signed = query.slice(0, query.indexOf('&sig='));
  assert.equal(signed, 'tc=1&exp=1800000000&rn=n1&ct=a&cid=a%20b&oid=ws1&ad=pre&ad.x=1%262');
  assert.equal(query.slice(query.indexOf('&sig=') + 5), createHmac('sha256', 'k3y').update(signed).digest('hex'));
  const parsed = parsePlaybackQuery(query);
  assert.equal(parsed.params.get('cid'), 'a b');
  assert.equal(parsed.params.get('ad.x'), '1&2');
  assert.equal(parsed.signedText, signed);
  assert.equal(parsed.sig, playbackSignature('k3y', signed));
  assert.deepEqual([parsed.trailingAfterSig, parsed.repeated], [false, []]);
});

test('event URLs use /play/event/ and ct=e', () => {
  const url = signPlaybackUrl({ baseUrl: '', kind: 'event', contentId: 'ev1', owner: 'o', key: 'k', expiresAt: 1 }, () => 'n');
  assert.match(url, /^\/play\/event\/ev1\.m3u8\?tc=1&exp=1&rn=n&ct=e&cid=ev1&oid=o&sig=[0-9a-f]{64}$/);
});

test('parsing notes a missing sig, an empty one, parameters after it and repeats', () => {
  assert.deepEqual([parsePlaybackQuery('tc=1').sig, parsePlaybackQuery('tc=1').signedText], [null, null]);
  assert.equal(parsePlaybackQuery('tc=1&sig=').sig, '');
  const trailing = parsePlaybackQuery('tc=1&sig=ab&exp=2');
  assert.deepEqual([trailing.sig, trailing.trailingAfterSig, trailing.params.has('exp')], ['ab', true, false]);
  assert.deepEqual(parsePlaybackQuery('tc=1&tc=2&sig=x').repeated, ['tc']);
  assert.equal(parsePlaybackQuery('sig=abc').signedText, '');
  assert.equal(parsePlaybackQuery('bad=%E0%A4%A&sig=x').params.get('bad'), '%E0%A4%A', 'undecodable text is kept as sent');
});
