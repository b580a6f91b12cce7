import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { PlaylineClient } from '../../src/client/index.js';
import type { AssetView } from '../../src/modules/assets/assets.schema.js';
import { makeClip, mediaToolsSkip } from '../helpers/media.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'playline-assets-e2e-'));
const running: ServerProcess[] = [];
after(async () => {
  for (const server of running) if (server.child.exitCode === null && server.child.signalCode === null) await server.kill9();
  rmSync(dataDir, { recursive: true, force: true });
});

const start = async (preset: string) => {
  const server = await startServerProcess({ PLAYLINE_DATA_DIR: dataDir, PLAYLINE_PACKAGING_LADDER: '180p,144p', PLAYLINE_PACKAGING_PRESET: preset });
  running.push(server);
  return server;
};

/** Polls the real server until `accept` holds (bounded; asserts no duration). */
async function waitFor(client: PlaylineClient, id: string, accept: (a: AssetView) => boolean, what: string): Promise<AssetView> {
  let last: AssetView | undefined;
  for (let i = 0; i < 600; i++) {
    last = await client.assets.get(id);
    if (accept(last)) return last;
    await delay(25);
  }
  throw new Error(`asset ${id} never ${what}: ${JSON.stringify(last)}`);
}

/** Whether a process runs (a zombie has ended); Linux /proc. */
const alive = (pid: number): boolean => {
  try {
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

test('kill -9 of the server while ffmpeg packages an upload: after a restart the asset ends ready, the interrupted output cleared first', { skip: await mediaToolsSkip() }, async () => {
  const clip = await makeClip(dataDir, 'clip.mp4', { seconds: 20 });
  // The slowest preset keeps the first packaging busy for seconds: the kill lands in the middle.
  const first = await start('veryslow');
  const { owner, key: apiKey } = bootstrapCredentials(first);
  const clientOf = (server: ServerProcess) => new PlaylineClient({ baseUrl: server.url, owner, apiKey });

  const uploaded = await clientOf(first).assets.upload(clip, { title: 'crash test' });
  await waitFor(clientOf(first), uploaded.id, (a) => a.state === 'processing' && a.progress > 0, 'packaging');
  await first.kill9();

  const media = join(dataDir, 'media');
  // Killed before it was packaged whole (its first segments may have been playable already).
  assert.equal(existsSync(join(media, 'assets', owner, uploaded.id, 'manifest.json')), false, 'killed before it was packaged');
  const attempt1 = join(media, 'work', owner, uploaded.id, 'attempt-1');
  const marker = JSON.parse(readFileSync(join(attempt1, '.process.json'), 'utf8')) as { pid: number };
  assert.ok(readdirSync(attempt1).some((f) => f !== '.process.json'), 'partial output on disk');

  const second = await start('ultrafast');
  const ready = await waitFor(clientOf(second), uploaded.id, (a) => a.state === 'ready' || a.state === 'failed', 'finished');
  assert.equal(ready.state, 'ready', JSON.stringify(ready));
  assert.deepEqual(ready.renditions.map((r) => r.name), ['180p', '144p']);
  assert.ok(ready.duration_s !== null && Math.abs(ready.duration_s - 20) < 0.1);
  assert.equal(alive(marker.pid), false, 'the ffmpeg the killed server left behind was stopped');
  assert.equal(existsSync(join(media, 'work', owner, uploaded.id)), false, 'no attempt left in work/');
  const manifest = JSON.parse(readFileSync(join(media, 'assets', owner, uploaded.id, 'manifest.json'), 'utf8')) as { renditions: Array<{ segments: unknown[] }> };
  assert.equal(manifest.renditions[0]?.segments.length, 5);
  assert.match(second.output(), /packaging again the assets interrupted by the previous shutdown/);
  assert.equal(await second.stop(), 0, 'graceful shutdown');
});
