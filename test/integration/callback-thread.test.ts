import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../src/app.js';
import { PlaylineClient, injectTransport } from '../../src/client/index.js';
import { loadConfig } from '../../src/platform/config.js';
import { createRuntime } from '../../src/runtime.js';
import { CallbackClient } from '../../src/platform/outbound/delivery-client.js';
import { ThreadedCallbackSender } from '../../src/modules/error-reporting/callback-sender.js';
import { startLocalReceiver } from '../../src/platform/outbound/testing/local-receiver.js';
import { eventually } from '../helpers/eventually.js';

// The runtime as shipped (system clock, system DNS) sends callbacks from the sender thread:
// reports submitted on the main thread arrive signed, and their outcomes reach the delivery counters.
for (const thread of [true, false]) {
  test(`callbacks with PLAYLINE_CALLBACK_THREAD=${thread} are delivered signed and counted`, { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'playline-callback-thread-'));
    const config = loadConfig({
      PLAYLINE_DATA_DIR: dataDir,
      PLAYLINE_SECRET_KEY: Buffer.alloc(32, 6).toString('base64'),
      PLAYLINE_LOG_LEVEL: 'silent',
      PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32',
      PLAYLINE_CALLBACK_THREAD: String(thread),
    });
    const receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
    const runtime = await createRuntime(config);
    const app = await buildApp(runtime);
    try {
      await runtime.start();
      const { transport } = runtime.errorReporting;
      assert.ok(thread ? transport instanceof ThreadedCallbackSender : transport instanceof CallbackClient);
      const workspace = await runtime.workspaces.createWorkspace('Thread');
      const key = await runtime.workspaces.createKey(workspace.id, { label: 'test' });
      const client = new PlaylineClient({ transport: injectTransport(app), owner: workspace.id, apiKey: key.secret });
      await client.errorReporting.putSettings({ callback_url: receiver.url });
      const seen = receiver.count();
      for (let i = 0; i < 20; i += 1) {
        runtime.errorReports.submit({ owner: workspace.id, url: `https://edge.example.com/${i}.m3u8`, ip: '203.0.113.9', code: 403, ua: 'P/1', msg: 'm', timestamp: 1_763_719_200, errorCode: 104 });
      }
      await receiver.waitFor(seen + 20);
      const got = receiver.received.slice(seen);
      assert.deepEqual(got.map((r) => (JSON.parse(r.body) as { url: string }).url).sort(), Array.from({ length: 20 }, (_, i) => `https://edge.example.com/${i}.m3u8`).sort());
      for (const r of got) assert.match(String(r.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
      await eventually(() => runtime.errorReporting.dispatcher.deliveries(workspace.id).counters.delivered === 20, 'all 20 attempts counted as delivered');
    } finally {
      await app.close();
      await runtime.close();
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
