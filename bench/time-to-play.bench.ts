/**
 * Time to play an upload (DESIGN §9: first playable segment ≤ 5 s after the upload completes, any
 * length; `ready` ≤ 1.05 × ffmpeg alone). For a 30 s and a 5-minute 1080p30 clip: upload (the
 * server's 201) → `playable` and → `ready`, through the real app with its default packaging
 * (ladder, preset), against the same ffmpeg command run alone on the same file reaching its first
 * segment in every rendition and its end. Runs one after the other, never side by side (2 cores).
 * BENCH_TTP_SECONDS overrides the clip lengths (e.g. `30` alone).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { PlaylineClient } from '../src/client/index.js';
import type { AssetView } from '../src/modules/assets/assets.schema.js';
import { loadConfig, packagingLadderOf } from '../src/platform/config.js';
import { confinedInput, probeFile, scanVideoPackets } from '../src/platform/media/ffprobe.js';
import { parseMediaPlaylist } from '../src/platform/media/hls-media-playlist.js';
import { describeSource, packagingArgs, planRenditions, type RenditionPlan } from '../src/modules/assets/packaging-plan.js';
import { packagingLimitsOf } from '../src/modules/assets/asset-packager.js';
import { startBenchServer } from './lib/http-load.js';
import type { Benchmark, Comparison } from './lib/report.js';

const server = new URL('./servers/api-server.ts', import.meta.url).pathname;
/** How often the asset's state (and ffmpeg's playlists) are looked at: the figures' resolution. */
const LOOK_MS = 50;

const lengths = (): number[] => (process.env.BENCH_TTP_SECONDS ?? '30,300').split(',').map(Number).filter((n) => n > 0);

/** A 1080p30 clip with a tone, as a camera or an editor would hand it over (H.264 + AAC, 2 s GOP). */
async function makeSource(dir: string, seconds: number): Promise<string> {
  const path = join(dir, `source-1080p-${seconds}s.mp4`);
  await runToEnd('ffmpeg', [
    '-hide_banner', '-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=1920x1080:rate=30:duration=${seconds}`,
    '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '60', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', path,
  ]);
  return path;
}

function runToEnd(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`))));
  });
}

/** Whether every rendition's playlist in `dir` lists at least one segment. */
async function everyRenditionHasASegment(dir: string, plan: readonly RenditionPlan[]): Promise<boolean> {
  for (const r of plan) {
    const text = await readFile(join(dir, r.name, 'playlist.m3u8'), 'utf8').catch(() => '');
    if (parseMediaPlaylist(text).segments.length === 0) return false;
  }
  return true;
}

/** The packaging ffmpeg command alone (as the asset library builds it for this file): seconds to its first segment in every rendition, and to its end. */
async function ffmpegAlone(source: string, workDir: string): Promise<{ firstS: number; endS: number }> {
  const config = loadConfig({});
  const limits = packagingLimitsOf(config);
  const probe = await probeFile('ffprobe', source);
  if (!probe.ok) throw new Error(`ffprobe: ${probe.reason}`);
  const scan = await scanVideoPackets('ffprobe', source, { maxPackets: limits.maxFrames });
  if (!scan.ok) throw new Error(`ffprobe scan: ${scan.reason}`);
  const described = describeSource(probe.media, limits, scan.timeline);
  if (!described.ok) throw new Error(described.reason);
  const plan = planRenditions(packagingLadderOf(config), described.source);
  mkdirSync(workDir, { recursive: true });
  const args = packagingArgs(plan, described.source, { source, workDir }, config.packagingPreset, confinedInput(source));
  const started = performance.now();
  let firstS: number | undefined;
  const child = spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const ended = new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(performance.now()) : reject(new Error(`packaging ffmpeg exited with ${code}`))));
  });
  let done = false;
  void ended.finally(() => (done = true)).catch(() => undefined);
  while (!done && firstS === undefined) {
    if (await everyRenditionHasASegment(workDir, plan)) firstS = (performance.now() - started) / 1000;
    else await delay(LOOK_MS);
  }
  const endS = ((await ended) - started) / 1000;
  return { firstS: firstS ?? endS, endS };
}

/** Through the app: upload, then the asset's state looked at every LOOK_MS until ready. */
async function throughPlayline(client: PlaylineClient, source: string): Promise<{ uploadS: number; playableS: number; readyS: number; playableAtS: number }> {
  // The server looks for ffmpeg at its start: an upload before that answers 503, and is sent again.
  const send = async (tries: number): Promise<{ asset: AssetView; started: number }> => {
    const started = performance.now();
    try {
      return { asset: await client.assets.upload(source), started };
    } catch (error) {
      if (tries >= 50 || (error as { code?: string }).code !== 'media_tools_missing') throw error;
      await delay(100);
      return send(tries + 1);
    }
  };
  const { asset, started } = await send(0);
  const uploaded = performance.now();
  let playable: number | undefined;
  let playableAtS = 0;
  for (;;) {
    const now = await client.assets.get(asset.id);
    if (now.state === 'failed') throw new Error(`packaging failed: ${now.failure_reason}`);
    if (playable === undefined && (now.state === 'playable' || now.state === 'ready')) {
      playable = performance.now();
      playableAtS = now.duration_s ?? 0;
    }
    if (now.state === 'ready') break;
    await delay(LOOK_MS);
  }
  const ready = performance.now();
  await client.assets.delete(asset.id);
  return { uploadS: (uploaded - started) / 1000, playableS: ((playable ?? ready) - uploaded) / 1000, readyS: (ready - uploaded) / 1000, playableAtS };
}

export const timeToPlayBenchmark: Benchmark = {
  name: 'time-to-play',
  description: 'upload -> first playable segment and -> ready (default packaging, 1080p30 sources) vs the same ffmpeg command alone reaching its first segment and its end',
  optIn: true,
  async run() {
    const scratch = mkdtempSync(join(tmpdir(), 'playline-bench-ttp-'));
    // The default packaging, with a wall-clock budget no loaded bench machine reaches (a budget stop is no figure).
    const app = await startBenchServer(server, { BENCH_SERVER: 'app', PLAYLINE_MEDIA_DIR: join(scratch, 'media'), PLAYLINE_PACKAGING_TIME_FACTOR: '100', PLAYLINE_PACKAGING_MIN_TIME_S: '3600' });
    const results: Comparison[] = [];
    try {
      const creds = /CREDENTIALS (\S+) (\S+)/.exec(app.output());
      if (!creds?.[1] || !creds[2]) throw new Error('bench server printed no credentials');
      const client = new PlaylineClient({ baseUrl: app.url, owner: creds[1], apiKey: creds[2] });
      for (const seconds of lengths()) {
        const source = await makeSource(scratch, seconds);
        const label = seconds >= 60 ? `${seconds / 60} min` : `${seconds} s`;
        const alone = await ffmpegAlone(source, join(scratch, `alone-${seconds}`));
        rmSync(join(scratch, `alone-${seconds}`), { recursive: true, force: true });
        // Each figure as soon as it is measured (a long run cut short keeps what it measured).
        process.stdout.write(`  (${label} 1080p30: ffmpeg alone: first segment of every rendition ${alone.firstS.toFixed(2)} s, end ${alone.endS.toFixed(2)} s)\n`);
        const playline = await throughPlayline(client, source);
        process.stdout.write(`  (${label} 1080p30: upload took ${playline.uploadS.toFixed(2)} s; then playable after ${playline.playableS.toFixed(2)} s with ${playline.playableAtS} s packaged, ready after ${playline.readyS.toFixed(2)} s)\n`);
        results.push(
          {
            name: `${label} 1080p: upload -> first playable segment`,
            unit: 's',
            value: playline.playableS,
            baseline: { name: 'ffmpeg alone -> first segment of every rendition', value: alone.firstS },
            target: '<= 5 s after the upload completes',
            met: playline.playableS <= 5,
          },
          {
            name: `${label} 1080p: upload -> ready`,
            unit: 's',
            value: playline.readyS,
            baseline: { name: 'ffmpeg alone -> end', value: alone.endS },
            target: '<= 1.05 x ffmpeg alone',
            met: playline.readyS <= alone.endS * 1.05,
          },
        );
        rmSync(source, { force: true });
      }
    } finally {
      await app.stop();
      rmSync(scratch, { recursive: true, force: true });
    }
    return results;
  },
};
