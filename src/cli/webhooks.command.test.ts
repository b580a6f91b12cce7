import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { eventually } from '../../test/helpers/eventually.js';
import { FakeClock } from '../platform/clock.js';
import { startLocalReceiver, type LocalReceiver } from '../platform/outbound/testing/local-receiver.js';
import type { SubscriptionWithSecretView, WebhookAttemptCollectionView, WebhookAttemptDetailView } from '../modules/webhooks/webhooks.schema.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

describe('playline webhooks (the CLI over a running server)', () => {
  let t: TestApp;
  let url: string;
  let receiver: LocalReceiver;
  before(async () => {
    // The CLI signs with the real time: the server's fake clock starts at it.
    t = await createTestApp({ clock: new FakeClock(Date.now()), env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' } });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    receiver = await startLocalReceiver({ kind: 'status', status: 500 }, { hangLimitMs: 10_000 });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const cli = (...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'webhooks', ...args, '--base-url', url, '--owner', t.workspace.id], {
      cwd: root,
      env: { ...process.env, PLAYLINE_API_KEY: t.key.secret },
    });

  test('create (secret once), list, update, attempts, resend (exit 1 unless 200), delete; bad event types refused before any call', { timeout: 120_000 }, async () => {
    const created = JSON.parse((await cli('create', '--url', receiver.url, '--events', 'live.started,live.ended', '--description', 'ops', '--json')).stdout) as SubscriptionWithSecretView;
    assert.match(created.signing_secret, /^whsec_/);
    const listed = await cli('list');
    assert.match(listed.stdout, new RegExp(`^${created.id}\\s+http://127\\.0\\.0\\.1:\\d+/hook\\s+live\\.started,live\\.ended\\s+true\\s+0\\s+ops$`, 'm'));
    assert.doesNotMatch(listed.stdout, /whsec_/);
    const shown = await cli('show', created.id);
    assert.doesNotMatch(shown.stdout, /whsec_/);
    const updated = await cli('update', created.id, '--disable');
    assert.match(updated.stdout, /^enabled\s+false$/m);
    await cli('update', created.id, '--enable');

    await assert.rejects(cli('create', '--url', receiver.url, '--events', 'live.started,asset.deleted'), (e: { code?: number; stderr?: string }) => e.code !== 0 && /comma-separated event types/.test(e.stderr ?? ''));

    await t.runtime.webhooks.events.publish(t.workspace.id, 'live.started', { slicer_id: 's1', state: 'live' });
    await eventually(async () => (await t.client.webhooks.listAttempts()).total_items === 1, 'the failed attempt logged');
    const attempts = JSON.parse((await cli('attempts', '--outcome', 'non_200', '--json')).stdout) as WebhookAttemptCollectionView;
    assert.equal(attempts.total_items, 1);
    const failed = attempts.items[0];
    assert.ok(failed);
    const attempt = await cli('attempt', failed.id);
    assert.match(attempt.stdout, /webhook-signature\s+v1,/);
    assert.match(attempt.stdout, /"type":"live.started"/);

    await assert.rejects(cli('resend', failed.id), (e: { code?: number; stderr?: string }) => e.code === 1 && /non_200 \(resend: HTTP 500\)/.test(e.stderr ?? ''));
    receiver.setBehaviour({ kind: 'status', status: 200 });
    const resent = JSON.parse((await cli('resend', failed.id, '--json')).stdout) as WebhookAttemptDetailView;
    assert.equal(resent.outcome, 'delivered');
    assert.equal(resent.resend_of, failed.id);

    const help = await cli('--help');
    assert.match(help.stdout, /recording\.ready/);
    assert.match(help.stdout, /5 s, 5 min, 30 min, 2 h, 5 h and 10 h/);
    await cli('delete', created.id);
    assert.equal((await t.client.webhooks.listSubscriptions()).total_items, 0);
  });
});
