import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SecretBox } from '../../platform/secret-box.js';
import { MAX_TOKEN_LENGTH, SessionTokens, type SessionGrant } from './session-token.js';

const grant: SessionGrant = {
  owner: 'o'.repeat(32),
  library: 'o'.repeat(32),
  assetId: 'a'.repeat(32),
  session: 'session-0001',
  requestedAt: 1_795_000_000_000,
  expiresAt: 1_795_000_060,
  plan: { sliceStartS: 8, startSegment: 1 },
  ads: { assetIds: ['ad-1'], latencyMs: 12.5 },
};
const serverKey = Buffer.alloc(32, 3);

test('a token verifies on any instance sharing the server key, and holds the grant exactly; it is URL-path safe', () => {
  const issuer = new SessionTokens(new SecretBox(serverKey).deriveKey('playback-session-token'));
  const other = new SessionTokens(new SecretBox(Buffer.from(serverKey)).deriveKey('playback-session-token'));
  const token = issuer.sign(grant);
  assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  assert.deepEqual(other.verify(token, grant.requestedAt), { ok: true, grant });
  assert.deepEqual(other.verify(token, grant.expiresAt * 1000), { ok: true, grant }, 'valid until exp, inclusive');
});

test('after exp the token is expired (104), and still says whose session it was', () => {
  const tokens = new SessionTokens(serverKey);
  assert.deepEqual(tokens.verify(tokens.sign(grant), grant.expiresAt * 1000 + 1), { ok: false, reason: 'expired', grant });
});

test('another key, a changed payload or mac, junk and overlong tokens are forged (110); a readable forgery names what it claims', () => {
  const tokens = new SessionTokens(serverKey);
  const token = tokens.sign(grant);
  const otherKey = new SessionTokens(Buffer.alloc(32, 4));
  assert.deepEqual(otherKey.verify(token, grant.requestedAt), { ok: false, reason: 'forged', claimed: { owner: grant.owner, assetId: grant.assetId, session: grant.session } });
  const [payload = '', mac = ''] = token.split('.');
  const changed = Buffer.from(JSON.stringify({ ...grant, expiresAt: grant.expiresAt + 86_400 })).toString('base64url');
  assert.equal(tokens.verify(`${changed}.${mac}`, grant.requestedAt).ok, false);
  assert.equal(tokens.verify(`${payload}.${mac.slice(0, -2)}AA`, grant.requestedAt).ok, false);
  assert.equal(tokens.verify(`${payload}.`, grant.requestedAt).ok, false);
  for (const junk of ['', 'abc', '.abc', 'a'.repeat(MAX_TOKEN_LENGTH + 1)]) {
    assert.deepEqual(tokens.verify(junk, grant.requestedAt), { ok: false, reason: 'forged', claimed: undefined }, junk.slice(0, 8));
  }
  // A correctly signed payload of the wrong shape is refused too (a key reused for another purpose cannot mint grants).
  const signedJunk = new SessionTokens(serverKey).sign({ ...grant, plan: { unknown: 1 } } as unknown as SessionGrant);
  assert.equal(tokens.verify(signedJunk, grant.requestedAt).ok, false);
});
