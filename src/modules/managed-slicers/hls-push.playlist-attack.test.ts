import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { eventually } from '../../../test/helpers/eventually.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';
import { assetDir, liveInputDir } from '../../platform/media/media-layout.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import { pushedPlaylistInput } from './listener-input.js';

const run = promisify(execFile);
const skip = await mediaToolsSkip();

/** The first video frame ffmpeg decodes from `input` (args as the slicer gives them), averaged to one RGB pixel; undefined when nothing decodes. */
async function firstFrameColour(inputArgs: readonly string[]): Promise<[number, number, number] | undefined> {
  const out = await run('ffmpeg', ['-hide_banner', '-v', 'error', ...inputArgs, '-frames:v', '1', '-vf', 'scale=1:1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { encoding: 'buffer', timeout: 60_000 }).catch(() => undefined);
  const bytes = out?.stdout;
  if (!bytes || bytes.length < 3) return undefined;
  return [bytes[0] ?? 0, bytes[1] ?? 0, bytes[2] ?? 0];
}
const isRed = (rgb: [number, number, number] | undefined): boolean => rgb !== undefined && rgb[0] > 180 && rgb[1] < 80 && rgb[2] < 80;

describe('hls push: a pushed playlist reads nothing outside its slicer folder, whatever its form (issue 35)', { skip }, () => {
  let t: TestApp;
  let base: string;
  let dir: string;
  /** The victim's packaged asset, as named from the attacker's input folder. */
  let victim: string;
  let victimLive: string;
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_SLICER_PROVISIONER: 'ffmpeg', PLAYLINE_REGIONS: 'eu-central-1' } });
    const slicer = await t.client.managedSlicers.create({ name: 'Attacker', region: 'eu-central-1', ingest_protocol: 'hls', output_profile: 'passthrough' });
    await eventually(async () => (await t.client.managedSlicers.getTask(slicer.task.id)).state === 'COMPLETED', 'the slicer runs');
    base = new URL((await t.client.managedSlicers.get(slicer.id)).ingest_url ?? '').pathname.replace(/\/index\.m3u8$/, '');
    const root = mediaRootOf(t.runtime.config);
    dir = liveInputDir(root, t.workspace.id, slicer.id);
    // Another workspace's private packaged asset: red fMP4 HLS, where the library keeps it.
    const rendition = join(assetDir(root, t.other.workspace.id, 'a0000000000000000000000000000001'), '360p');
    await mkdir(rendition, { recursive: true });
    await run('ffmpeg', ['-hide_banner', '-v', 'error', '-f', 'lavfi', '-i', 'color=red:s=160x90:r=10:d=2', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-g', '10',
      '-f', 'hls', '-hls_time', '2', '-hls_playlist_type', 'vod', '-hls_segment_type', 'fmp4', '-hls_fmp4_init_filename', 'init.mp4',
      '-hls_segment_filename', join(rendition, 'seg_%05d.m4s'), join(rendition, 'index.m3u8')]);
    victim = `../../../assets/${t.other.workspace.id}/a0000000000000000000000000000001/360p`;
    victimLive = `../../../live/${t.other.workspace.id}/s0000000000000000000000000000001/media_main.m3u8`;
  });
  after(() => t.close());

  const push = (file: string, body: string | Buffer) => t.app.inject({ method: 'PUT', url: `${base}/${file}`, payload: body, headers: { 'content-type': 'application/octet-stream' } });

  test('control: the victim\'s asset decodes red when named directly (the colour check can fail)', async () => {
    assert.ok(isRed(await firstFrameColour(pushedPlaylistInput(join(dir, victim, 'index.m3u8')).args)));
  });

  const forms: Array<{ name: string; playlist: () => string }> = [
    { name: 'a lone CR inside #EXTINF (and an unquoted EXT-X-MAP URI)', playlist: () => `#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:4\n#EXT-X-MAP:URI=${victim}/init.mp4\n#EXTINF:2.0,\r${victim}/seg_00000.m4s\n#EXT-X-ENDLIST\n` },
    { name: 'a NUL separator', playlist: () => `#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:4\n#EXT-X-PLAYLIST-TYPE:VOD\u0000#EXT-X-MAP:URI="${victim}/init.mp4"\n#EXTINF:2.0,\u0000${victim}/seg_00000.m4s\n#EXT-X-ENDLIST\n` },
    { name: 'an unquoted #EXT-X-MAP:URI= and a CR-hidden segment', playlist: () => `#EXTM3U\r\n#EXT-X-TARGETDURATION:4\r\n#EXT-X-MAP:URI=${victim}/init.mp4\r\n#EXTINF:2.0,\r${victim}/seg_00000.m4s\r\n#EXT-X-ENDLIST\r\n` },
    { name: 'the live relay ../../../live/<V>/<S>/media_main.m3u8 behind a CR', playlist: () => `#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000\r${victimLive}\n` },
  ];
  for (const form of forms) {
    test(`refused: ${form.name}; ffmpeg reading what was stored shows no frame of the other workspace`, async () => {
      const answer = await push('probe.m3u8', form.playlist());
      const stored = (await readdir(dir)).includes('probe.m3u8');
      const colour = stored ? await firstFrameColour(pushedPlaylistInput(join(dir, 'probe.m3u8')).args) : undefined;
      assert.ok(!isRed(colour), `the slicer's reader decoded the other workspace's asset (rgb ${String(colour)})`);
      assert.equal(answer.statusCode, 400, answer.body);
      assert.match(answer.body, /validation_failed/);
      assert.ok(!stored, 'nothing was stored');
    });
  }

  test('refused: a master naming variant.ts, and a "segment" that holds a playlist (plain or behind an ID3 tag)', async () => {
    const variantPlaylist = `#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MAP:URI="${victim}/init.mp4"\n#EXTINF:2.0,\n${victim}/seg_00000.m4s\n#EXT-X-ENDLIST\n`;
    const segment = await push('variant.ts', variantPlaylist);
    const id3 = Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0]), Buffer.from(variantPlaylist)]);
    const behindId3 = await push('variant.aac', id3);
    const master = await push('probe.m3u8', '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000\nvariant.ts\n');
    const stored = (await readdir(dir)).includes('probe.m3u8');
    const colour = stored ? await firstFrameColour(pushedPlaylistInput(join(dir, 'probe.m3u8')).args) : undefined;
    assert.ok(!isRed(colour), `the slicer's reader decoded the other workspace's asset (rgb ${String(colour)})`);
    assert.equal(segment.statusCode, 400, segment.body);
    assert.equal(behindId3.statusCode, 400, behindId3.body);
    assert.equal(master.statusCode, 400, master.body);
  });

  test('what is stored is re-serialised: LF only, known tags, quoted URIs, titles and unknown tags dropped', async () => {
    const answer = await push('clean.m3u8', '#EXTM3U\r\n#EXT-X-VERSION:7\r\n#EXT-X-TARGETDURATION:4\r\n#EXT-X-MAP:URI=init.mp4\r\n#EXT-X-MADE-UP:URI="../x"\r\n# a comment\r\n#EXTINF:4.0,title\r\nseg1.m4s\r\n');
    assert.equal(answer.statusCode, 201, answer.body);
    assert.equal(await readFile(join(dir, 'clean.m3u8'), 'utf8'), '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:4\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:4.0,\nseg1.m4s\n');
  });
});
