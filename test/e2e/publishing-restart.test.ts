import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { PlaylineClient } from '../../src/client/index.js';
import { livePlaylistPath } from '../../src/platform/media/media-layout.js';
import { eventually } from '../helpers/eventually.js';
import { mediaToolsSkip } from '../helpers/media.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const run = promisify(execFile);
const skip = await mediaToolsSkip();
const dataDir = mkdtempSync(join(tmpdir(), 'playline-publish-e2e-'));
const children: ChildProcess[] = [];
const servers: ServerProcess[] = [];
after(async () => {
  for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) await server.kill9();
  for (const child of children) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

const env = { PLAYLINE_DATA_DIR: dataDir, PLAYLINE_PUBLISHER: 'ffmpeg', PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' };
const ffmpeg = (args: string[]) => {
  const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', ...args], { stdio: 'ignore' });
  children.push(child);
  return child;
};
/** Pids of the ffmpeg processes pushing `input` (this test's own live window). */
async function pushesOf(input: string): Promise<number[]> {
  const { stdout } = await run('ps', ['-eo', 'pid=,args=']);
  return stdout.split('\n').filter((line) => line.includes('-progress pipe:1') && line.includes(input)).map((line) => Number(line.trim().split(/\s+/)[0]));
}

test('kill -9 of the server while publishing: the orphaned push goes, and the restarted server pushes the schedule again', { skip }, async () => {
  const first = await startServerProcess(env);
  servers.push(first);
  const { owner, key: apiKey } = bootstrapCredentials(first);
  const slicerId = 'c0ffee00'.repeat(4);
  const playlist = livePlaylistPath(join(dataDir, 'media'), owner, slicerId);
  mkdirSync(dirname(playlist), { recursive: true });
  ffmpeg(['-re', '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p',
    '-f', 'hls', '-hls_segment_type', 'fmp4', '-hls_time', '1', '-hls_list_size', '6', '-hls_flags', 'delete_segments', playlist]);
  await eventually(() => existsSync(playlist) && (readFileSync(playlist, 'utf8').match(/#EXTINF/g) ?? []).length >= 3, 'the live window has segments', 60_000);

  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  const output = `srt://127.0.0.1:${port}`;
  const receive = () => {
    const child = ffmpeg(['-i', `${output}?mode=listener`, '-c', 'copy', '-f', 'null', '-']);
    return new Promise<void>((resolve) => child.once('exit', () => resolve()));
  };
  const firstReceiverEnded = receive();

  let client = new PlaylineClient({ baseUrl: first.url, owner, apiKey });
  const target = await client.syndication.createTarget({ platform: 'Custom', target_protocol: 'srt', target_stream: output });
  const schedule = await client.syndication.createSchedule({ syndication_target_id: target.id, content_id: slicerId, content_type: 'e', region: 'us-west-2' });
  assert.equal((await client.syndication.scheduleAction(schedule.id, 'start')).status, 'active');
  const [orphan] = await pushesOf(playlist);
  assert.ok(orphan, 'the push runs');
  await first.kill9();
  // kill -9 does not reach the push: it runs on (until SRT notices its relay is gone, or the next server kills it).
  assert.deepEqual(await pushesOf(playlist), [orphan], 'the push outlives the server');

  const second = await startServerProcess(env);
  servers.push(second);
  client = new PlaylineClient({ baseUrl: second.url, owner, apiKey });
  await eventually(async () => !(await pushesOf(playlist)).includes(orphan), 'the orphan is gone', 60_000);
  await firstReceiverEnded; // it ends with the orphan's stream; a new one takes the port
  void receive();
  let status = '';
  await eventually(async () => (status = (await client.syndication.getSchedule(schedule.id)).status) === 'active' && (await pushesOf(playlist)).length === 1, 'the schedule pushes again', 90_000);
  assert.equal(status, 'active');
  assert.notEqual((await pushesOf(playlist))[0], orphan);

  assert.equal((await client.syndication.scheduleAction(schedule.id, 'stop')).status, 'stopped');
  await eventually(async () => (await pushesOf(playlist)).length === 0, 'no push runs after stop');
  assert.equal(await second.stop(), 0, 'graceful shutdown');
});
