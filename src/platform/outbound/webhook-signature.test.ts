import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { generateSigningSecret, isSigningSecret, WebhookSigner } from './webhook-signature.js';

// The published verifier checks the timestamp against the real time, so these messages carry it.
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

const body = JSON.stringify({
  owner: 'ws1',
  subtype: 'web',
  url: 'https://edge.example.com/play/a.m3u8?sig=x',
  ip: '203.0.113.9',
  code: 403,
  ua: 'Mozilla/5.0 (Ünïcode)',
  msg: 'Invalid token signature',
  timestamp: 1_700_000_000,
});

test('generated secrets have the whsec_ form and are distinct', () => {
  const a = generateSigningSecret();
  const b = generateSigningSecret();
  assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.notEqual(a, b);
  assert.equal(isSigningSecret(a), true);
  for (const bad of ['abc', 'whsec_', 'whsec_!!!!', 'whsec_AAAA', `sk_${a.slice(6)}`]) {
    assert.equal(isSigningSecret(bad), false, bad);
  }
});

test('the standardwebhooks library verifies our signature', () => {
  const secret = generateSigningSecret();
  const headers = new WebhookSigner([secret]).sign('msg_2f1c', nowSeconds(), body);
  assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
  const verified = new Webhook(secret).verify(body, { ...headers });
  assert.deepEqual(verified, JSON.parse(body));
});

test('the verifier rejects a tampered body, another secret and a stale timestamp', () => {
  const secret = generateSigningSecret();
  const signer = new WebhookSigner([secret]);
  const headers = { ...signer.sign('msg_1', nowSeconds(), body) };
  const verifier = new Webhook(secret);
  assert.throws(() => verifier.verify(body.replace('403', '404'), headers), WebhookVerificationError);
  assert.throws(() => new Webhook(generateSigningSecret()).verify(body, headers), WebhookVerificationError);
  const stale = { ...signer.sign('msg_1', nowSeconds() - 3600, body) };
  assert.throws(() => verifier.verify(body, stale), WebhookVerificationError);
});

test('during a rotation both the old and the new secret verify', () => {
  const previous = generateSigningSecret();
  const current = generateSigningSecret();
  const headers = { ...new WebhookSigner([current, previous]).sign('msg_9', nowSeconds(), body) };
  assert.equal(headers['webhook-signature'].split(' ').length, 2);
  assert.deepEqual(new Webhook(previous).verify(body, headers), JSON.parse(body));
  assert.deepEqual(new Webhook(current).verify(body, headers), JSON.parse(body));
});

test('the signature matches the spec test vector', () => {
  // From the Standard Webhooks specification's reference example.
  const signer = new WebhookSigner(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']);
  const headers = signer.sign(
    'msg_p5jXN8AQM9LWM0D4loKWxJek',
    1614265330,
    '{"test": 2432232314}',
  );
  assert.equal(headers['webhook-signature'], 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
});

test('a signer refuses malformed secrets', () => {
  assert.throws(() => new WebhookSigner(['nope']));
  assert.throws(() => new WebhookSigner([]));
});
