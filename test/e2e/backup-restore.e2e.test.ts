import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlaylineClient } from '../../src/client/index.js';
import { playline } from '../helpers/cli.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const ADMIN = 'backup-admin-token-0123456789';

/** Everything a client can read back: statistics, keys, targets, schedules, slicers and tasks. */
async function answers(client: PlaylineClient, assets: string[]) {
  const strip = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
  return strip({
    workspace: await client.workspace.get(),
    keys: await client.core.request('GET', '/api/v4/workspace/keys'),
    stats: await Promise.all(assets.map((a) => client.vodStats.asset(a))),
    top: await client.vodStats.all({ top: 100 }),
    search: await client.vodStats.search(assets),
    targets: await client.syndication.listTargets(),
    schedules: await client.syndication.listSchedules(),
    slicers: (await client.managedSlicers.list()).page,
    tasks: (await client.managedSlicers.listTasks()).page,
  });
}

describe('playline backup while the server runs, then restore onto a new directory', () => {
  const base = mkdtempSync(join(tmpdir(), 'playline-backup-e2e-'));
  const source = join(base, 'source');
  const backup = join(base, 'backup');
  const restored = join(base, 'restored');
  let first: ServerProcess;
  let owner: string;
  let keys: string[];
  const assets = ['movie-1', 'movie-2', 'movie-3'];
  let expected: Awaited<ReturnType<typeof answers>>;

  before(async () => {
    first = await startServerProcess({ PLAYLINE_DATA_DIR: source, PLAYLINE_ADMIN_TOKEN: ADMIN, PLAYLINE_SLICER_PROVISIONER: 'simulated', PLAYLINE_SLICER_PROVISION_MS: '0', PLAYLINE_PUBLISHER: 'simulated' });
    const credentials = bootstrapCredentials(first);
    owner = credentials.owner;
    const bootstrapKey = credentials.key;
    const extra = (await (await fetch(`${first.url}/api/v4/admin/workspaces/${owner}/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'second' }),
    })).json()) as { secret: string };
    keys = [bootstrapKey, extra.secret];
    const client = new PlaylineClient({ baseUrl: first.url, owner, apiKey: bootstrapKey });
    const target = await client.syndication.createTarget({ platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_1', description: 'twitch' });
    const schedule = await client.syndication.createSchedule({ syndication_target_id: target.id, content_id: 'c1', content_type: 'e', region: 'us-east-1' });
    await client.syndication.scheduleAction(schedule.id, 'start');
    await client.managedSlicers.create({ name: 'Main', region: 'us-east-1', ingest_protocol: 'srt', output_profile: 'hd-720p' });
    const now = Date.now();
    const events = assets.flatMap((asset, i) => [
      ...Array.from({ length: i + 2 }, (_, s) => [
        { type: 'request' as const, owner, asset_id: asset, session_id: `${asset}-s${s}`, ts: now - 5000 },
        { type: 'manifest' as const, owner, asset_id: asset, session_id: `${asset}-s${s}`, ts: now - 4000, latency_ms: 20 + s },
        { type: 'start' as const, owner, asset_id: asset, session_id: `${asset}-s${s}`, ts: now - 3000 + s },
      ]).flat(),
      { type: 'error' as const, owner, asset_id: asset, session_id: `${asset}-bad`, ts: now - 2000, error_code: 104 },
    ]);
    await client.vodStats.ingest(events);
    // Slicer tasks end at once (provision 0 ms): wait until none is open, so both sides agree.
    for (let i = 0; i < 100; i++) {
      const tasks = (await client.managedSlicers.listTasks()).page;
      if (tasks.items.every((t) => t.state === 'COMPLETED' || t.state === 'FAILED')) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expected = await answers(client, assets);
  });

  after(async () => {
    await first?.stop();
    rmSync(base, { recursive: true, force: true });
  });

  test('a backup of the running server restores to a server that answers the same', async () => {
    const made = await playline(['backup', backup, '--data-dir', source, '--json']);
    assert.equal(made.status, 0, made.stderr);
    const manifest = JSON.parse(made.stdout) as { files: { path: string }[]; secret_key_included: boolean };
    const paths = manifest.files.map((f) => f.path);
    assert.ok(paths.includes('playline.db') && paths.includes('secret.key') && paths.some((p) => p.startsWith('vod-stats/journal-')), paths.join(' '));
    assert.equal(manifest.secret_key_included, true);
    assert.equal(statSync(join(backup, 'secret.key')).mode & 0o777, 0o600);

    const back = await playline(['restore', backup, '--data-dir', restored]);
    assert.equal(back.status, 0, back.stderr);
    // Simulated publishing like the source: the real publisher would resume the started schedule and find c1 not live.
    const second = await startServerProcess({ PLAYLINE_DATA_DIR: restored, PLAYLINE_SLICER_PROVISIONER: 'simulated', PLAYLINE_PUBLISHER: 'simulated' });
    try {
      assert.doesNotMatch(second.output(), /API key:/, 'a restored directory is not a first start');
      for (const key of keys) {
        const client = new PlaylineClient({ baseUrl: second.url, owner, apiKey: key });
        assert.deepEqual(await answers(client, assets), expected);
      }
    } finally {
      await second.stop();
    }
  });

  test('restore never overwrites data, and refuses an incomplete or damaged backup', async () => {
    const incomplete = join(base, 'incomplete');
    mkdirSync(incomplete);
    writeFileSync(join(incomplete, 'playline.db'), 'x');
    // The refusals that read the intact backup, side by side; then the damaged one.
    const [again, noManifest, into] = await Promise.all([
      playline(['restore', backup, '--data-dir', restored]),
      playline(['restore', incomplete, '--data-dir', join(base, 'never')]),
      playline(['backup', backup, '--data-dir', source]),
    ]);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /is not empty: restore refuses to overwrite existing data/);
    assert.equal(noManifest.status, 1);
    assert.match(noManifest.stderr, /is not a complete Playline backup/);
    assert.equal(into.status, 1);
    assert.match(into.stderr, /is not empty: back up into a new or empty directory/);

    writeFileSync(join(backup, 'secret.key'), 'tampered\n');
    const damaged = await playline(['restore', backup, '--data-dir', join(base, 'never')]);
    assert.equal(damaged.status, 1);
    assert.match(damaged.stderr, /backup file secret\.key is missing or damaged/);
    assert.throws(() => readdirSync(join(base, 'never')), 'nothing restored');
  });
});
