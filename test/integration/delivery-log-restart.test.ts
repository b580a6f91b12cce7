import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../src/app.js';
import { PlaylineClient, injectTransport } from '../../src/client/index.js';
import { FakeClock } from '../../src/platform/clock.js';
import { loadConfig } from '../../src/platform/config.js';
import { randomIds } from '../../src/platform/ids.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { startLocalReceiver } from '../../src/platform/outbound/testing/local-receiver.js';
import { eventually } from '../helpers/eventually.js';

// The delivery log is in the database: a runtime re-created on the same data directory (a
// restart) lists the attempts the previous one made, payload and signature headers included.
test('logged delivery attempts survive a restart', { timeout: 60_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-delivery-log-'));
  const config = loadConfig({
    PLAYLINE_DATA_DIR: dataDir,
    PLAYLINE_SECRET_KEY: Buffer.alloc(32, 5).toString('base64'),
    PLAYLINE_LOG_LEVEL: 'silent',
    PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32',
  });
  const clock = new FakeClock();
  const receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
  const open = async () => {
    const runtime = await createRuntime(config, { clock, ids: randomIds });
    await runtime.start();
    const app = await buildApp(runtime);
    return { runtime, app };
  };
  let first: { runtime: Runtime; app: Awaited<ReturnType<typeof buildApp>> } | undefined;
  let second: typeof first;
  try {
    first = await open();
    const workspace = await first.runtime.workspaces.createWorkspace('Restart');
    const key = await first.runtime.workspaces.createKey(workspace.id, { label: 'test' });
    const clientOf = (app: Awaited<ReturnType<typeof buildApp>>) =>
      new PlaylineClient({ transport: injectTransport(app), owner: workspace.id, apiKey: key.secret, now: () => clock.now() });
    await clientOf(first.app).errorReporting.putSettings({ callback_url: receiver.url });
    for (const code of [403, 404]) {
      first.runtime.errorReports.submit({ owner: workspace.id, url: 'https://edge.example.com/a.m3u8', ip: '203.0.113.9', code, ua: 'P/1', msg: 'm', timestamp: 1_763_719_200, errorCode: 104 });
      await receiver.waitFor(receiver.count() + 1);
    }
    // Settled attempts are queued for the log; the graceful stop writes them (no list call before).
    await eventually(() => first?.runtime.errorReporting.dispatcher.deliveries(workspace.id).counters.delivered === 2, 'both attempts settled');
    await first.app.close();
    await first.runtime.close();
    first = undefined;

    second = await open();
    const list = await clientOf(second.app).errorReporting.listAttempts();
    assert.equal(list.total_items, 2);
    assert.deepEqual(list.items.map((a) => a.outcome), ['delivered', 'delivered']);
    const detail = await clientOf(second.app).errorReporting.getAttempt(list.items[0]?.id ?? '');
    assert.equal(detail.payload.owner, workspace.id);
    const got = receiver.received.find((r) => r.headers['webhook-id'] === detail.webhook_id);
    assert.equal(detail.request.body, got?.body);
    assert.equal(detail.request.headers['webhook-signature'], got?.headers['webhook-signature']);
  } finally {
    await first?.app.close();
    await first?.runtime.close();
    await second?.app.close();
    await second?.runtime.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
