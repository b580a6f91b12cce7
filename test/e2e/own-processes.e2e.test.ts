import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlaylineClient } from '../../src/client/index.js';
import { eventually } from '../helpers/eventually.js';
import { mediaToolsSkip } from '../helpers/media.js';
import { playline } from '../helpers/cli.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { portBlock } from '../helpers/ports.js';

/**
 * A server only ever ends processes it started and takes no port another holds (security review,
 * issue 28): a second `playline serve` on the same data directory, and a restored copy started on
 * the same host (as `restore` suggests), leave the running server's slicer process and port as
 * they were. Before, the second server ended the slicer's ffmpeg on its way to being refused, and
 * the restored copy ended it through the process markers it had copied, then took its port.
 */
const skip = await mediaToolsSkip();
// Ingest ports: a free block of the test port window (test/helpers/ports.ts, PLAYLINE_TEST_PORT_BASE),
// below the kernel's ephemeral range, so no client socket of another test holds them.
const PORT = await portBlock(10);

/** The pids of the processes whose command line names `text` (Linux /proc). */
const pidsNaming = (text: string): number[] =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);

describe('a server touches only its own processes and ports', { skip, timeout: 180_000 }, () => {
  const base = mkdtempSync(join(tmpdir(), 'playline-own-'));
  const source = join(base, 'source');
  const env = (dataDir: string) => ({
    PLAYLINE_DATA_DIR: dataDir,
    PLAYLINE_SLICER_PROVISIONER: 'ffmpeg',
    PLAYLINE_SLICER_PORTS: `${PORT}-${PORT + 9}`,
    PLAYLINE_REGIONS: 'eu-central-1',
    PLAYLINE_PUBLISHER: 'simulated',
  });
  let running: ServerProcess;
  let client: PlaylineClient;
  let slicerId: string;
  let ingestUrl: string;
  let pid: number;
  const servers: ServerProcess[] = [];

  before(async () => {
    running = await startServerProcess(env(source));
    servers.push(running);
    const { owner, key } = bootstrapCredentials(running);
    client = new PlaylineClient({ baseUrl: running.url, owner, apiKey: key });
    const slicer = await client.managedSlicers.create({ name: 'Mine', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'passthrough' });
    slicerId = slicer.id;
    await eventually(async () => (await client.managedSlicers.getTask(slicer.task.id)).state === 'COMPLETED', 'the slicer runs');
    ingestUrl = (await client.managedSlicers.get(slicerId)).ingest_url ?? '';
    assert.match(ingestUrl, new RegExp(`^srt://127\\.0\\.0\\.1:${PORT}\\?`));
    // The slicer's ffmpeg is the one process whose command line holds the tag its marker names (the
    // window's directory, or the private directory of its low-latency output sockets).
    const marker = join(source, 'media', 'live', owner, slicerId, '.slicer-process.json');
    const tagOf = (): string => {
      try {
        return (JSON.parse(readFileSync(marker, 'utf8')) as { tag: string }).tag;
      } catch {
        return '';
      }
    };
    await eventually(() => tagOf() !== '' && pidsNaming(tagOf()).length === 1, 'its ffmpeg runs');
    pid = pidsNaming(tagOf())[0] as number;
  });
  after(async () => {
    for (const server of servers.reverse()) if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    rmSync(base, { recursive: true, force: true });
  });

  const unchanged = async (what: string) => {
    assert.ok(existsSync(`/proc/${pid}`), `${what}: the running slicer's ffmpeg (${pid}) still runs`);
    const shown = await client.managedSlicers.get(slicerId);
    assert.equal(shown.ingest_url, ingestUrl, `${what}: its ingest URL (port) is unchanged`);
    assert.equal(shown.live?.restarts, 0, `${what}: it was never restarted`);
  };

  test('a second server on the same data directory is refused before it touches anything', async () => {
    await assert.rejects(startServerProcess(env(source)), /data directory .* is in use by another running Playline server/);
    await unchanged('after the second server');
  });

  test('a restored copy started on the same host leaves the original alone and takes another port', async () => {
    const backup = join(base, 'backup');
    const restored = join(base, 'restored');
    assert.equal((await playline(['backup', backup, '--data-dir', source])).status, 0);
    assert.equal((await playline(['restore', backup, '--data-dir', restored])).status, 0);
    const copy = await startServerProcess(env(restored));
    servers.push(copy);
    const { owner, key } = bootstrapCredentials(running);
    const copyClient = new PlaylineClient({ baseUrl: copy.url, owner, apiKey: key });
    // The copy runs its own slicer process, on a port of its own.
    await eventually(async () => (await copyClient.managedSlicers.get(slicerId)).live?.state === 'waiting_for_source', 'the copy runs its slicer');
    const copied = await copyClient.managedSlicers.get(slicerId);
    assert.notEqual(copied.ingest_url, ingestUrl);
    await unchanged('after the restored copy started');
    await copy.stop();
    await unchanged('after the restored copy stopped');
  });
});
