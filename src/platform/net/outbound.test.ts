import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { parseCallbackAllowList } from './callback-allowlist.js';
import { createOutbound, outboundOf, OutboundRefused, type Destination } from './outbound.js';
import type { HostResolver, ResolvedAddress } from './ssrf-guard.js';
import { ConfigError } from '../config.js';
import { systemClock } from '../clock.js';

/** A loopback listener that counts who reaches it: it stands where an internal service would be. */
describe('the outbound layer: the guard and the pinning are inside the connector', () => {
  let server: Server;
  let port: number;
  const reached: Socket[] = [];

  before(async () => {
    server = createServer((socket) => {
      reached.push(socket);
      socket.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    for (const socket of reached) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const connected = (socket: Socket): Promise<string> =>
    new Promise((resolve) => {
      socket.once('connect', () => {
        resolve(`${socket.remoteAddress ?? ''}`);
        socket.destroy();
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });

  test('a loopback, private or metadata destination is refused with its reason, and nothing connects', async () => {
    const outbound = createOutbound();
    const before = reached.length;
    for (const [host, why] of [['127.0.0.1', /loopback/], ['10.1.2.3', /private/], ['169.254.169.254', /metadata/], ['::1', /loopback/]] as const) {
      const verdict = await outbound.admit(host, port);
      assert.equal(verdict.ok, false, host);
      assert.match(verdict.ok ? '' : verdict.detail, why);
    }
    assert.equal(reached.length, before);
  });

  test('a destination this layer did not admit is refused by every connector (no hand-made way past the guard)', async () => {
    const outbound = createOutbound({ allowList: parseCallbackAllowList('127.0.0.1/32') });
    const forged: Destination = { host: '127.0.0.1', port, address: '127.0.0.1', family: 4, viaAllowList: true };
    const before = reached.length;
    assert.throws(() => outbound.connect(forged), OutboundRefused);
    assert.throws(() => outbound.connect({ ...forged }, {}), OutboundRefused);
    assert.throws(() => outbound.request(forged, new URL(`http://127.0.0.1:${port}/`), {}), OutboundRefused);
    assert.throws(() => outbound.dispatcher(forged, `http://127.0.0.1:${port}`, {}), OutboundRefused);
    assert.throws(() => outbound.udp(forged, () => undefined), OutboundRefused);
    assert.throws(() => outbound.ffmpegUrl('rist', forged), OutboundRefused);
    // One admitted by another instance (another allow-list) does not pass either.
    const other = await createOutbound({ allowList: parseCallbackAllowList('127.0.0.0/8') }).admit('127.0.0.1', port);
    assert.ok(other.ok);
    assert.throws(() => outbound.connect(other.destination), OutboundRefused);
    assert.equal(reached.length, before);
  });

  test('an admitted name connects to the address checked, whatever DNS answers afterwards (rebinding)', async () => {
    let answer: ResolvedAddress = { address: '127.0.0.1', family: 4 };
    const resolver: HostResolver = { resolve: async () => [answer] };
    const outbound = createOutbound({ resolver, allowList: parseCallbackAllowList('127.0.0.1/32') });
    const verdict = await outbound.admit('ingest.example', port);
    assert.ok(verdict.ok);
    assert.deepEqual({ ...verdict.destination }, { host: 'ingest.example', port, address: '127.0.0.1', family: 4, viaAllowList: true });
    answer = { address: '10.9.9.9', family: 4 };
    assert.equal(await connected(outbound.connect(verdict.destination)), '127.0.0.1', 'pinned: no second lookup');
    const again = await outbound.admit('ingest.example', port);
    assert.equal(again.ok, false, 'checked again, the new answer is refused');
    assert.equal(outbound.ffmpegUrl('srt', verdict.destination), `srt://127.0.0.1:${port}`, 'ffmpeg gets the literal, not the name');
  });

  test('admitUrl: http(s) only, no credentials; the destination carries the default port', async () => {
    const outbound = createOutbound({ resolver: { resolve: async () => [{ address: '93.184.215.14', family: 4 }] } });
    const ok = await outbound.admitUrl('https://hooks.example.test/x');
    assert.ok(ok.ok);
    assert.equal(ok.destination.port, 443);
    assert.equal(ok.destination.address, '93.184.215.14');
    for (const url of ['rtmp://hooks.example.test/live', 'http://user:pw@hooks.example.test/', 'not a url']) {
      assert.equal((await outbound.admitUrl(url)).ok, false, url);
    }
    assert.equal((await outbound.admit('hooks.example.test', 0)).ok, false, 'port 0 is not a destination');
  });

  test('outboundOf: a bad PLAYLINE_OUTBOUND_ALLOWLIST entry stops the start with a config error', () => {
    assert.throws(() => outboundOf({ outboundAllowlist: '10.0.0.0/99' }, systemClock), ConfigError);
  });
});
