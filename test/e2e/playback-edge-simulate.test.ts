import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PlaylineClient } from '../../src/client/index.js';
import { createSimulatedWorkspace, sameTotals, serverTotals } from '../../src/simulator/simulator-setup.js';
import type { TrafficTotals } from '../../src/simulator/traffic-simulator.js';
import { sharedPlaylineBin } from '../helpers/built-package.js';
import { packagedTestPattern } from '../helpers/media.js';
import { startServerProcess } from '../helpers/server-process.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const ADMIN = 'e2e-admin-token-0123456789';

interface Summary {
  sessions: number;
  failed_requests: number;
  owners: string[];
  totals: TrafficTotals;
  by_owner: Record<string, TrafficTotals>;
  server: { totals: TrafficTotals; matches: boolean };
}

describe('playline simulate against the real server', { timeout: 120_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-simulate-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('a short run ends with totals equal to the owner summaries of the same window', async () => {
    // Half the sessions are refusals from one address: the refused-playback limit is off so that all are counted.
    const server = await startServerProcess({ PLAYLINE_DATA_DIR: dataDir, PLAYLINE_ADMIN_TOKEN: ADMIN, PLAYLINE_PLAYBACK_REFUSAL_LIMIT: '0' });
    try {
      const owners = [
        await createSimulatedWorkspace(server.url, ADMIN, 'viewers A'),
        await createSimulatedWorkspace(server.url, ADMIN, 'viewers B'),
      ];
      const credentials = owners.map((o) => `${o.owner}:${o.key}`).join(',');
      const { stdout, stderr } = await run(
        process.execPath,
        [await sharedPlaylineBin(), 'simulate', '--base-url', server.url, '--credentials', credentials,
          '--duration', '3s', '--rate', '40', '--assets', '5', '--error-share', '0.5', '--ad-share', '0.5', '--media-dir', join(dataDir, 'media'), '--json'],
        { cwd: root, timeout: 60_000 },
      );
      const summary = JSON.parse(stdout) as Summary;
      assert.match(stderr, /^\[\d+\.\ds\] sessions \d+ \([\d.]+\/s\), in flight \d+, ok \d+, errors \d+: /m, 'a progress line on stderr');
      // How many sessions 3 s of real time hold depends on the machine: only that some ran, and all counted.
      assert.ok(summary.sessions > 0, `sessions: ${summary.sessions}`);
      assert.equal(summary.failed_requests, 0);
      assert.ok(summary.totals.manifest > 0 && summary.totals.ad > 0 && Object.keys(summary.totals.errors).length > 0, JSON.stringify(summary.totals));
      assert.equal(summary.totals.new, summary.totals.manifest);
      assert.equal(summary.server.matches, true, JSON.stringify(summary, null, 2));

      // Read the owner summaries ourselves: the same numbers, owner by owner.
      const read = await serverTotals(server.url, owners);
      assert.ok(sameTotals(read.totals, summary.totals), `${JSON.stringify(read.totals)} vs ${JSON.stringify(summary.totals)}`);
      for (const o of owners) {
        assert.ok(sameTotals(read.byOwner[o.owner] as TrafficTotals, summary.by_owner[o.owner] as TrafficTotals), o.owner);
        const own = await new PlaylineClient({ baseUrl: server.url, owner: o.owner, apiKey: o.key }).vodStats.summary();
        assert.equal(own.stats.sessions.requests, summary.by_owner[o.owner]?.requests);
      }

      // playline sign-playback prints a URL that plays in any HLS player: ffprobe reads the stitched ad and the content.
      await packagedTestPattern(join(dataDir, 'media'), owners[0]?.owner ?? '', 'movie-7', { seconds: 4, segmentS: 2 });
      const signed = await run(
        process.execPath,
        [await sharedPlaylineBin(), 'sign-playback', 'movie-7', '--owner', owners[0]?.owner ?? '', '--base-url', server.url,
          '--param', 'hlsver=7', '--param', 'ad=sim-ads', '--expires-in', '10m'],
        { cwd: root, timeout: 30_000, env: { ...process.env, PLAYLINE_API_KEY: owners[0]?.key ?? '' } },
      );
      const url = signed.stdout.trim();
      assert.match(url, /\/play\/movie-7\.m3u8\?tc=1&exp=\d+&rn=[0-9a-f]+&ct=a&cid=movie-7&oid=[0-9a-f]{32}&hlsver=7&ad=sim-ads&sig=[0-9a-f]{64}$/);
      const probe = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name:format=duration', '-of', 'json', url], { timeout: 30_000 });
      const probed = JSON.parse(probe.stdout) as { streams: Array<{ codec_name: string }>; format: { duration: string } };
      assert.deepEqual(probed.streams.map((st) => st.codec_name).sort(), ['aac', 'h264']);
      assert.ok(Number(probed.format.duration) >= 7.5, `ad (4 s) and content (4 s): ${probed.format.duration} s`);
    } finally {
      await server.stop();
    }
  });
});
