import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestApp } from '../../../test/helpers/test-app.js';
import type { TestApp } from '../../../test/helpers/test-app.js';
import { FakeClock } from '../../platform/clock.js';
import { sequentialIds } from '../../platform/ids.js';
import { createRuntime } from '../../runtime.js';
import type { Runtime } from '../../runtime.js';
import { startLocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import type { LocalReceiver } from '../../platform/outbound/testing/local-receiver.js';

// Two runtimes over one database stand for two server processes (or a restart): settings are
// stored, loaded at start, and a change made through one is picked up by the other's next check.
const opts = { timeout: 15_000 };

const untilTrue = async (condition: () => boolean, turns = 2000): Promise<void> => {
  for (let i = 0; i < turns && !condition(); i += 1) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(condition(), 'condition not reached');
};

describe('callback settings across instances', () => {
  const clock = new FakeClock();
  let t: TestApp;
  let receiver: LocalReceiver;
  let peer: Runtime;
  const peers: Runtime[] = [];
  const peerDirs: string[] = [];

  const startPeer = async (): Promise<Runtime> => {
    // Its own data directory, as another process has: one server per statistics journal (an OS lock).
    const dataDir = mkdtempSync(join(tmpdir(), 'playline-peer-'));
    peerDirs.push(dataDir);
    const runtime = await createRuntime({ ...t.runtime.config, dataDir }, { clock, ids: sequentialIds(), storage: t.runtime.storage });
    await runtime.start();
    peers.push(runtime);
    return runtime;
  };

  before(async () => {
    t = await createTestApp({ clock, env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' } });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
    peer = await startPeer();
  });
  after(async () => {
    for (const runtime of peers) await runtime.close();
    for (const dir of peerDirs) rmSync(dir, { recursive: true, force: true });
    await t.close();
    await receiver.close();
  });

  test('a URL saved on one instance is used by another within one check interval (500 ms)', opts, async () => {
    const owner = t.workspace.id;
    await t.client.errorReporting.putSettings({ callback_url: receiver.url });
    assert.equal(t.runtime.errorReporting.dispatcher.routeFor(owner)?.url, receiver.url, 'at once on the saving instance');
    assert.equal(peer.errorReporting.dispatcher.routeFor(owner), undefined);
    clock.advance(500);
    await untilTrue(() => peer.errorReporting.dispatcher.routeFor(owner)?.url === receiver.url);
    const before = receiver.count();
    assert.equal(peer.errorReporting.dispatcher.submit({ owner, url: 'u', ip: '203.0.113.1', code: 404, ua: 'a', msg: 'm', timestamp: 1 }), 'queued');
    await receiver.waitFor(before + 1);
  });

  test('a restarted instance loads the saved callback when it starts', opts, async () => {
    const restarted = await startPeer();
    assert.equal(restarted.errorReporting.dispatcher.routeFor(t.workspace.id)?.url, receiver.url);
    const settings = await restarted.errorReporting.service.getSettings(t.workspace.id);
    assert.equal(settings.signingSecret, (await t.client.errorReporting.getSettings()).signing_secret);
  });

  test('a removal and a secret rotation reach the other instance too', opts, async () => {
    const owner = t.workspace.id;
    const rotated = await t.client.errorReporting.rotateSecret();
    clock.advance(500);
    await untilTrue(() => {
      const route = peer.errorReporting.dispatcher.routeFor(owner);
      return route !== undefined && route.signer.sign('m', 1, 'b')['webhook-signature'].split(' ').length === 2;
    });
    await t.client.errorReporting.deleteSettings();
    clock.advance(500);
    await untilTrue(() => peer.errorReporting.dispatcher.routeFor(owner) === undefined);
    assert.ok(rotated.previous_signing_secret_expires_at);
  });

  test('once the rotation grace period ends, only the new secret signs', opts, async () => {
    const owner = t.workspace.id;
    await t.client.errorReporting.putSettings({ callback_url: receiver.url });
    const signatures = () => peer.errorReporting.dispatcher.routeFor(owner)?.signer.sign('m', 1, 'b')['webhook-signature'].split(' ').length;
    clock.advance(24 * 60 * 60 * 1000);
    // Each check schedules the next one when it finishes, so time moves in check-sized steps.
    for (let step = 0; step < 20 && signatures() !== 1; step += 1) {
      for (let turn = 0; turn < 50; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      clock.advance(500);
    }
    await untilTrue(() => signatures() === 1);
  });
});
