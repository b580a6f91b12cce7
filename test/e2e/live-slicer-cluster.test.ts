import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mediaToolsSkip } from '../helpers/media.js';
import { clusterFixture, pollUntil } from '../helpers/cluster.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { portBlock } from '../helpers/ports.js';

/**
 * Cluster mode with real slicers: two instances on one PostgreSQL and Redis and one media
 * directory, each naming itself differently in ingest URLs. The slicer runs on the instance that
 * created it, the other shows its live state; when that instance is killed with -9 the other
 * takes the slicer over, ends the orphaned ffmpeg, runs its own, and the ingest URL names it.
 */
// Ingest ports: a free block of the test port window (test/helpers/ports.ts, PLAYLINE_TEST_PORT_BASE),
// below the kernel's ephemeral range, so no client socket of another test holds them.
const PORT_BASE = await portBlock(10);
const toolsProblem = await mediaToolsSkip();
const fx = await clusterFixture({
  env: {
    PLAYLINE_SLICER_PROVISIONER: 'ffmpeg',
    PLAYLINE_SLICER_LEASE_MS: '3000',
    PLAYLINE_SLICER_PORTS: `${PORT_BASE}-${PORT_BASE + 9}`,
    PLAYLINE_SLICER_BIND_HOST: '127.0.0.1',
  },
});
const pushers: ChildProcess[] = [];
const servers: ServerProcess[] = [];
const markers: string[] = [];
after(async () => {
  for (const child of pushers) child.kill('SIGKILL');
  for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
  // An ffmpeg whose server was killed and never taken over would outlive the test.
  for (const marker of markers) {
    try {
      process.kill((JSON.parse(readFileSync(marker, 'utf8')) as { pid: number }).pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  await fx.cleanup();
});

const markedPid = (file: string): number | undefined => {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
};
const runs = (pid: number): boolean => {
  try {
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('cluster mode: a slicer runs on one instance and is taken over when it dies', { skip: fx.skip || toolsProblem, timeout: 180_000 }, () => {
  test('A runs the slicer and B shows its state; kill -9 of A: B ends the orphan, runs the slicer, the ingest URL names B and a pushed source makes it live', async () => {
    const a = await fx.start({ PLAYLINE_PUBLIC_HOST: '127.0.0.1' });
    servers.push(a);
    const b = await fx.start({ PLAYLINE_PUBLIC_HOST: 'localhost' });
    servers.push(b);
    const slicer = await fx.client(a).managedSlicers.create({ name: 'Cluster live', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'passthrough' });
    const created = await pollUntil(() => fx.client(a).managedSlicers.getTask(slicer.task.id), (t) => t.state === 'COMPLETED' || t.state === 'FAILED', 'CREATE done');
    assert.equal(created.state, 'COMPLETED', JSON.stringify(created));
    const onA = await fx.client(a).managedSlicers.get(slicer.id);
    assert.match(onA.ingest_url ?? '', new RegExp(`^srt://127\\.0\\.0\\.1:${PORT_BASE}\\?passphrase=[A-Za-z0-9_-]{32}&pbkeylen=16$`));
    const seenFromB = await pollUntil(() => fx.client(b).managedSlicers.get(slicer.id), (s) => s.live?.state === 'waiting_for_source', 'B shows the state A stores');
    assert.equal(seenFromB.ingest_url, onA.ingest_url);

    const marker = join(fx.mediaDir, 'live', fx.owner, slicer.id, '.slicer-process.json');
    markers.push(marker);
    const orphan = markedPid(marker);
    assert.ok(orphan !== undefined && runs(orphan), 'A runs ffmpeg');
    await a.kill9();

    // The port is kept when free; the host is B's.
    const taken = await pollUntil(() => fx.client(b).managedSlicers.get(slicer.id), (s) => /^srt:\/\/localhost:\d+\?/.test(s.ingest_url ?? '') && s.live?.state === 'waiting_for_source', 'B took the slicer over', 60_000);
    assert.equal(taken.ingest_url?.split('?')[1], onA.ingest_url?.split('?')[1], 'the stream key moves with the slicer');
    const port = Number(/:(\d+)\?/.exec(taken.ingest_url ?? '')?.[1]);
    assert.ok(port >= PORT_BASE && port <= PORT_BASE + 9, String(taken.ingest_url));
    assert.equal(taken.state, 'running');
    assert.ok(!runs(orphan), 'the orphaned ffmpeg of A was ended');
    const mine = markedPid(marker);
    assert.ok(mine !== undefined && mine !== orphan && runs(mine), 'B runs its own ffmpeg');

    pushers.push(spawn('ffmpeg', [
      '-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25', '-f', 'lavfi', '-i', 'sine',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '50', '-c:a', 'aac', '-f', 'mpegts', (taken.ingest_url ?? '').replace('//localhost:', '//127.0.0.1:'),
    ], { stdio: 'ignore' }));
    await pollUntil(() => fx.client(b).managedSlicers.get(slicer.id), (s) => s.live?.state === 'live', 'live on B', 60_000);

    const deleting = await fx.client(b).managedSlicers.delete(slicer.id);
    const deleted = await pollUntil(() => fx.client(b).managedSlicers.getTask(deleting.task.id), (t) => t.state === 'COMPLETED' || t.state === 'FAILED', 'DELETE done');
    assert.equal(deleted.state, 'COMPLETED');
    await pollUntil(async () => runs(mine), (running) => !running, 'B stopped its ffmpeg');
  });
});
