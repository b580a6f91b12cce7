import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.js';
import { startLocalReceiver, type LocalReceiver } from '../../src/platform/outbound/testing/local-receiver.js';
import type { Db } from '../../src/platform/db/database.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { mediaRootOf } from '../../src/platform/media/media-root.js';

const OWNED_TABLES = [
  'api_keys', 'syndication_targets', 'syndication_schedules', 'syndication_clipping_profiles', 'managed_slicers', 'managed_slicer_tasks',
  'playback_app_keys', 'playback_ad_configs', 'playback_drm_policies', 'playback_private_assets', 'error_reporting_settings',
  'assets', 'ingest_grants', 'playback_shares', 'webhook_subscriptions', 'webhook_deliveries',
] as const;

const rowsOf = async (db: Db, owner: string): Promise<Record<string, number>> => {
  const counts: Record<string, number> = {};
  for (const table of OWNED_TABLES) {
    const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', owner).executeTakeFirstOrThrow();
    counts[table] = Number(row.n);
  }
  return counts;
};

// Embedded mode (SQLite, memory statistics); the Redis store's erasure is tested beside the store.
{
  describe('DELETE /api/v4/admin/workspaces/<id>', () => {
    let t: TestApp;
    let receiver: LocalReceiver;
    const admin = (method: 'DELETE' | 'GET', url: string, token = TEST_ADMIN_TOKEN) =>
      t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` } });

    /** A workspace with something in every module: keys, publishing, a slicer, the playback catalogue, a callback, statistics. */
    const populate = async (app: TestApp, owner: string, client: TestApp['client']) => {
      const send = async (method: string, path: string, body?: unknown) => {
        const r = await client.core.send(method, path, body === undefined ? {} : { body });
        assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
        const answer = (typeof r.body === 'string' ? JSON.parse(r.body) : r.body) as { id?: string; '@id'?: string };
        return { id: answer.id ?? String(answer['@id']).split('/').pop() ?? '' };
      };
      // An endpoint that refuses connections: the schedule's publishing.active waits for its retry.
      await send('POST', '/api/v4/webhooks/subscriptions', { url: 'http://127.0.0.1:9/hook', event_types: ['publishing.active'] });
      const target = await send('POST', '/api/v4/syndication-target', { platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_123', description: 'd' });
      const schedule = await send('POST', '/api/v4/syndication-schedule', { syndication_target_id: target.id, content_id: 'c1', content_type: 'e', region: 'us-east-1' });
      await send('PATCH', `/api/v4/syndication-schedule-action/${schedule.id}`, { mode: 'start' });
      await send('POST', '/api/v4/managed-slicer/slicers', { name: 'S', region: 'us-east-1', ingest_protocol: 'srt', output_profile: 'hd-720p' });
      await send('POST', '/api/v4/playback/app-keys', { name: 'web' });
      await send('PUT', '/api/v4/playback/ad-configs/preroll', { ad_server_url: 'https://ads.example/vast' });
      if (app.runtime.assets.tools()?.available) await client.assets.upload(Readable.from([Buffer.from('an upload, not media')]));
      const grantee = app.other.workspace.id === owner ? app.workspace.id : app.other.workspace.id;
      const granted = await app.app.inject({ method: 'PUT', url: `/api/v4/admin/workspaces/${owner}/ingest-grants/${grantee}`, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      assert.ok(granted.statusCode < 300, granted.body);
      // Each of the two workspaces shares its content with the other: deletion removes the share given and the one got.
      await send('PUT', `/api/v4/workspace/shares/${grantee}`);
      await send('PUT', '/api/v4/error-reporting/settings', { callback_url: receiver.url, enabled: true });
      const now = app.clock.now();
      const events = [
        { type: 'start', owner, asset_id: 'a1', session_id: 's1', ts: now },
        { type: 'error', owner, asset_id: 'a1', session_id: 's2', ts: now, error_code: 104 },
      ];
      await send('POST', '/api/v4/monitoring/events', events);
    };

    before(async () => {
      receiver = await startLocalReceiver();
      t = await createTestApp({ env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_SLICER_PROVISION_MS: '0' } });
      await populate(t, t.workspace.id, t.client);
      await populate(t, t.other.workspace.id, t.other.client);
    });
    after(async () => {
      await t?.close();
      await receiver?.close();
    });

    test('needs the admin token', async () => {
      assert.equal((await admin('DELETE', `/api/v4/admin/workspaces/${t.workspace.id}`, 'wrong-token-0123456789')).statusCode, 401);
      assert.equal((await t.client.core.send('DELETE', `/api/v4/admin/workspaces/${t.workspace.id}`)).status, 401);
    });

    test('deletes the workspace with every module\'s data, and nothing of another workspace', async () => {
      const owner = t.workspace.id;
      const other = t.other.workspace.id;
      const otherRowsBefore = await rowsOf(t.runtime.storage.db, other);
      const otherStatsBefore = await t.other.client.core.send('GET', '/api/v4/monitoring/vod-stats/a1');
      assert.equal(otherStatsBefore.status, 200);
      const populated = Object.entries(await rowsOf(t.runtime.storage.db, owner)).filter(([, n]) => n > 0).map(([table]) => table);
      const media = t.runtime.assets.tools()?.available ? ['assets'] : [];
      for (const table of ['api_keys', 'syndication_targets', 'syndication_schedules', 'managed_slicers', 'managed_slicer_tasks', 'playback_app_keys', 'playback_ad_configs', 'error_reporting_settings', 'ingest_grants', 'playback_shares', 'webhook_subscriptions', ...media]) {
        assert.ok(populated.includes(table), `${table} holds rows of the workspace first`);
      }
      assert.ok((await t.runtime.vodStats.store.ownerIds()).includes(owner));
      assert.ok(t.runtime.errorReporting.dispatcher.routeFor(owner));

      const response = await admin('DELETE', `/api/v4/admin/workspaces/${owner}`);
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json<{ id: string; message: string; deleted: Record<string, number> }>();
      assert.equal(body.message, 'Deleted');
      assert.equal(body.id, owner);
      assert.deepEqual(Object.keys(body.deleted).sort(), ['assets', 'error_reporting', 'ingest_grants', 'managed_slicers', 'playback_catalog', 'publishing', 'webhooks', 'workspace']);
      assert.equal(existsSync(join(mediaRootOf(t.runtime.config), 'assets', owner)), false, 'no media of the workspace is left');

      assert.deepEqual(Object.values(await rowsOf(t.runtime.storage.db, owner)).filter((n) => n > 0), [], 'no row of the workspace is left');
      assert.equal((await admin('GET', '/api/v4/admin/workspaces')).json<{ items: { id: string }[] }>().items.some((w) => w.id === owner), false);
      assert.equal((await t.runtime.vodStats.store.ownerIds()).includes(owner), false, 'statistics erased');
      assert.equal(t.runtime.errorReporting.dispatcher.routeFor(owner), undefined, 'no callback route');
      assert.equal(t.runtime.errorReporting.dispatcher.deliveries(owner).recent.length, 0, 'no delivery log');
      const refused = await t.client.core.send('GET', '/api/v4/workspace');
      assert.equal(refused.status, 401, 'its keys no longer sign');

      // The other workspace keeps everything but the grant and the share it gave to the deleted one.
      assert.deepEqual(await rowsOf(t.runtime.storage.db, other), { ...otherRowsBefore, ingest_grants: 0, playback_shares: 0 });
      const received = await t.runtime.storage.db.selectFrom('playback_shares').select('workspace_id').where('grantee_id', '=', owner).execute();
      assert.deepEqual(received, [], 'no share names the deleted workspace');
      const otherStatsAfter = await t.other.client.core.send('GET', '/api/v4/monitoring/vod-stats/a1');
      assert.deepEqual([otherStatsAfter.status, otherStatsAfter.body], [otherStatsBefore.status, otherStatsBefore.body]);
    });

    test('an unknown or already deleted workspace is 404', async () => {
      const again = await admin('DELETE', `/api/v4/admin/workspaces/${t.workspace.id}`);
      assert.equal(again.statusCode, 404);
      assert.equal(again.json<{ code: string }>().code, 'not_found');
    });
  });
}
