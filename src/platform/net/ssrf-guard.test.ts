import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyAddress } from './address-class.js';
import { AllowListError, parseCallbackAllowList } from './callback-allowlist.js';
import { pinnedLookup } from './pinned-lookup.js';
import type { HostResolver, ResolvedAddress } from './ssrf-guard.js';
import { SsrfGuard } from './ssrf-guard.js';
import { FakeClock } from '../clock.js';

/** Answers from a fixed table and never touches the network. */
const fakeResolver = (table: Record<string, string[]>): HostResolver => ({
  resolve(hostname) {
    const found = table[hostname];
    if (!found) return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    return Promise.resolve(
      found.map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  },
});

const resolver = fakeResolver({
  'hooks.example.com': ['93.184.215.14'],
  'internal.example.com': ['10.0.0.7'],
  'mixed.example.com': ['93.184.215.14', '192.168.1.20'],
  'v6.example.com': ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'meta.example.com': ['169.254.169.254'],
  'receiver.test': ['127.0.0.1'],
  'empty.example.com': [],
});

test('refuses loopback, metadata, private literals and non-http schemes', async () => {
  const guard = new SsrfGuard({ resolver });
  const cases: Array<[string, string]> = [
    ['http://127.0.0.1/hook', 'forbidden_address'],
    ['http://[::1]/hook', 'forbidden_address'],
    ['http://169.254.169.254/latest/meta-data', 'forbidden_address'],
    ['http://10.1.2.3/hook', 'forbidden_address'],
    ['http://2130706433/hook', 'forbidden_address'], // 127.0.0.1 as one number
    ['http://[::ffff:127.0.0.1]/', 'forbidden_address'],
    ['http://[::ffff:a9fe:a9fe]/', 'forbidden_address'],
    ['http://[::10.0.0.1]/', 'forbidden_address'], // IPv4-compatible
    ['http://[64:ff9b::a00:1]/', 'forbidden_address'], // NAT64 of 10.0.0.1
    ['http://[2002:a00:1::]/', 'forbidden_address'], // 6to4 of 10.0.0.1
    ['http://[fd00:ec2::254]/', 'forbidden_address'],
    ['http://[fc00::1]/', 'forbidden_address'],
    ['http://[fe80::1]/', 'forbidden_address'],
    ['http://100.64.0.1/', 'forbidden_address'],
    ['http://0.0.0.0/', 'forbidden_address'],
    ['http://255.255.255.255/', 'forbidden_address'],
    ['http://224.0.0.1/', 'forbidden_address'],
    ['http://240.0.0.1/', 'forbidden_address'],
    ['ftp://hooks.example.com/x', 'unsupported_scheme'],
    ['file:///etc/passwd', 'unsupported_scheme'],
    ['gopher://hooks.example.com/', 'unsupported_scheme'],
    ['not a url', 'invalid_url'],
    ['http://user:pw@hooks.example.com/', 'invalid_url'],
  ];
  for (const [url, reason] of cases) {
    const result = await guard.check(url);
    assert.equal(result.ok, false, url);
    if (!result.ok) assert.equal(result.reason, reason, url);
  }
});

test('refuses a host name that resolves to a private, metadata or mixed set of addresses', async () => {
  const guard = new SsrfGuard({ resolver });
  for (const host of ['internal.example.com', 'meta.example.com', 'mixed.example.com']) {
    const result = await guard.check(`https://${host}/hook`);
    assert.equal(result.ok, false, host);
    if (!result.ok) {
      assert.equal(result.reason, 'forbidden_address');
      assert.match(result.detail, new RegExp(`^${host} resolves to `));
    }
  }
  const internal = await guard.check('http://internal.example.com/');
  assert.equal(!internal.ok && internal.addressClass, 'private');
});

test('refuses names that do not resolve', async () => {
  const guard = new SsrfGuard({ resolver });
  for (const host of ['nowhere.example.com', 'empty.example.com']) {
    const result = await guard.check(`http://${host}/`);
    assert.equal(!result.ok && result.reason, 'unresolvable', host);
  }
});

test('a resolver that never answers is refused once the resolve timeout passes', async () => {
  const clock = new FakeClock();
  const guard = new SsrfGuard({ resolver: { resolve: () => new Promise(() => undefined) }, clock, resolveTimeoutMs: 100 });
  const pending = guard.check('http://slow.example.com/');
  clock.advance(100);
  const result = await pending;
  assert.equal(!result.ok && result.reason, 'unresolvable');
});

test('admits public addresses and returns the address to pin to', async () => {
  const guard = new SsrfGuard({ resolver });
  const byName = await guard.check('https://hooks.example.com/errors?x=1');
  assert.equal(byName.ok, true);
  if (byName.ok) {
    assert.equal(byName.address, '93.184.215.14');
    assert.equal(byName.family, 4);
    assert.equal(byName.hostname, 'hooks.example.com');
    assert.equal(byName.viaAllowList, false);
  }
  const v6 = await guard.check('http://v6.example.com:8080/');
  assert.equal(v6.ok && v6.family, 6);
  const literal = await guard.check('http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/');
  assert.equal(literal.ok && literal.address, '2606:2800:21f:cb07:6820:80da:af6b:8b2c');
});

test('the allow-list admits the local receiver by CIDR or host name, never metadata', async () => {
  const byCidr = new SsrfGuard({ resolver, allowList: parseCallbackAllowList('127.0.0.0/8, ::1') });
  for (const url of ['http://127.0.0.1:4567/hook', 'http://[::1]:4567/', 'http://receiver.test/']) {
    const result = await byCidr.check(url);
    assert.equal(result.ok && result.viaAllowList, true, url);
  }
  assert.equal((await byCidr.check('http://10.1.2.3/')).ok, false);

  const byName = new SsrfGuard({ resolver, allowList: parseCallbackAllowList('receiver.test,*.example.com') });
  const admitted = await byName.check('http://receiver.test:9/');
  assert.equal(admitted.ok && admitted.address, '127.0.0.1');
  assert.equal((await byName.check('http://internal.example.com/')).ok, true);
  assert.equal((await byName.check('http://127.0.0.1/')).ok, false, 'a host entry does not admit the literal');
  assert.equal((await byName.check('http://meta.example.com/')).ok, false, 'metadata is never admitted');

  const wide = new SsrfGuard({ resolver, allowList: parseCallbackAllowList('169.254.0.0/16') });
  assert.equal((await wide.check('http://169.254.169.254/')).ok, false);
  assert.equal((await wide.check('http://169.254.1.1/')).ok, true);
});

test('the allow-list parser names the bad entry', () => {
  assert.deepEqual(parseCallbackAllowList(' 10.0.0.0/8 , , hooks.local ').entries, ['10.0.0.0/8', 'hooks.local']);
  for (const [value, position] of [
    ['10.0.0.0/33', 1],
    ['localhost,300.1.2.3', 2],
    ['::1/129', 1],
    ['a,b,exa mple.com', 3],
    ['10.0.0.0/x', 1],
    ['http://example.com', 1],
  ] as const) {
    assert.throws(
      () => parseCallbackAllowList(value),
      (error: unknown) => error instanceof AllowListError && error.message.includes(`entry ${position} `),
      value,
    );
  }
});

test('allow-list CIDRs match IPv4-mapped addresses', () => {
  const list = parseCallbackAllowList('10.0.0.0/8,fd00::/8');
  assert.equal(list.admitsAddress('::ffff:10.2.3.4'), true);
  assert.equal(list.admitsAddress('10.2.3.4'), true);
  assert.equal(list.admitsAddress('fd12::1'), true);
  assert.equal(list.admitsAddress('11.0.0.1'), false);
  const mapped = parseCallbackAllowList('::ffff:10.0.0.0/104');
  assert.equal(mapped.admitsAddress('10.9.9.9'), true);
});

test('address classes', () => {
  assert.equal(classifyAddress('8.8.8.8').class, 'public');
  assert.equal(classifyAddress('172.16.0.1').class, 'private');
  assert.equal(classifyAddress('::ffff:8.8.8.8').class, 'public');
  assert.equal(classifyAddress('::ffff:8.8.8.8').canonical, '8.8.8.8');
  assert.equal(classifyAddress('2001:db8::1').class, 'reserved');
  assert.equal(classifyAddress('2001::1').class, 'reserved'); // Teredo
  assert.equal(classifyAddress('fe80::1%eth0').class, 'invalid');
});

test('the pinned lookup answers with the checked address in both callback forms', () => {
  const lookup = pinnedLookup('93.184.215.14', 4);
  lookup('evil.example.com', {}, (error, address, family) => {
    assert.equal(error, null);
    assert.equal(address, '93.184.215.14');
    assert.equal(family, 4);
  });
  lookup('evil.example.com', { all: true }, (_error, addresses) => {
    assert.deepEqual(addresses, [{ address: '93.184.215.14', family: 4 }]);
  });
});
