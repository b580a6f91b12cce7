import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientNetworkOf } from './address-class.js';

const grouped = { ipv4Prefix: 24, ipv6Prefix: 64 };

test('IPv4 clients are grouped by their /24', () => {
  assert.equal(clientNetworkOf('127.0.1.1', grouped), '127.0.1.0/24');
  assert.equal(clientNetworkOf('127.0.1.1', grouped), clientNetworkOf('127.0.1.254', grouped));
  assert.notEqual(clientNetworkOf('127.0.1.1', grouped), clientNetworkOf('127.0.2.1', grouped));
  assert.equal(clientNetworkOf('203.0.113.77', { ipv4Prefix: 16, ipv6Prefix: 64 }), '203.0.0.0/16');
});

test('an IPv4-mapped IPv6 client (a dual-stack listener) is grouped as the IPv4 address it carries', () => {
  assert.equal(clientNetworkOf('::ffff:127.0.1.5', grouped), '127.0.1.0/24');
  assert.equal(clientNetworkOf('::ffff:7f00:105', grouped), '127.0.1.0/24');
  assert.notEqual(clientNetworkOf('::ffff:127.0.2.5', grouped), '127.0.1.0/24');
});

test('IPv6 clients are grouped by their /64, whatever the interface identifier', () => {
  const one = clientNetworkOf('2001:db8:1:2::1', grouped);
  assert.equal(one, '2001:db8:1:2::/64');
  assert.equal(clientNetworkOf('2001:DB8:1:2:ffff:ffff:ffff:fffe', grouped), one);
  assert.equal(clientNetworkOf('2001:db8:1:2:a:b:c:d', grouped), one);
  assert.notEqual(clientNetworkOf('2001:db8:1:3::1', grouped), one);
  assert.equal(clientNetworkOf('2001:db8:1:2ff::1', { ipv4Prefix: 24, ipv6Prefix: 56 }), '2001:db8:1:200::/56');
});

test('prefixes of 32 and 128 count each address alone', () => {
  const exact = { ipv4Prefix: 32, ipv6Prefix: 128 };
  assert.equal(clientNetworkOf('127.0.1.1', exact), '127.0.1.1/32');
  assert.notEqual(clientNetworkOf('127.0.1.1', exact), clientNetworkOf('127.0.1.2', exact));
  assert.notEqual(clientNetworkOf('2001:db8::1', exact), clientNetworkOf('2001:db8::2', exact));
});

test('a remote address that is not an IP literal is its own group', () => {
  assert.equal(clientNetworkOf('', grouped), '');
  assert.equal(clientNetworkOf('fe80::1%eth0', grouped), 'fe80::1%eth0');
});
