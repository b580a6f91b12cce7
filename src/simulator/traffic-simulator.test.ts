import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sumTotals, TrafficSimulator, type SimulatedOwner, type TrafficProgress } from './traffic-simulator.js';

/** A seeded generator, so the session mix is the same every run. */
const seeded = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

/**
 * A fake edge: playback URLs answer a multivariant naming one session variant (its token says
 * whether ads were asked), variants name an ad segment (with ads) and two content segments.
 */
const fakeEdge = (path: string): { status: number; errorCode: number | null; body: string } => {
  if (path.includes('tc=2')) return { status: 400, errorCode: 113, body: '' };
  if (path.includes('.mpd?')) return { status: 404, errorCode: 999, body: '' };
  if (path.startsWith('/play/s/')) {
    if (!path.endsWith('.m3u8')) return { status: 200, errorCode: null, body: '' };
    const ad = path.includes('/s/with-ad/') ? '#EXT-X-MAP:URI="../a/0/ad/init.mp4"\n#EXTINF:4,\n../a/0/ad/seg_00000.m4s\n#EXT-X-DISCONTINUITY\n' : '';
    return { status: 200, errorCode: null, body: `#EXTM3U\n${ad}#EXT-X-MAP:URI="../c/360p/init.mp4"\n#EXTINF:4,\n../c/360p/seg_00000.m4s\n#EXTINF:4,\n../c/360p/seg_00001.m4s\n` };
  }
  return { status: 200, errorCode: null, body: `#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\ns/${path.includes('ad=') ? 'with-ad' : 'plain'}/v/360p.m3u8\n` };
};

const owners: SimulatedOwner[] = ['o1', 'o2'].map((owner) => ({ owner, apiKey: `${owner}-key`, appKeySecret: 's', contentOwner: null, assets: ['a1', 'a2', 'a3'] }));

test('sessions start at the rate for the duration; totals count what the edge answered', async () => {
  let now = 0;
  const paths: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const simulator = new TrafficSimulator({
    now: () => now,
    // Time moves only here, after the sessions in flight had their turn (a session makes several requests).
    wait: (ms) => {
      now += ms;
      return new Promise((resolve) => setImmediate(resolve));
    },
    random: seeded(7),
    async get(path) {
      paths.push(path);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await Promise.resolve();
      inFlight -= 1;
      return fakeEdge(path);
    },
  });
  const progress: TrafficProgress[] = [];
  const report = await simulator.run(
    { owners, ratePerS: 100, durationMs: 2000, adShare: 0.5, errorShares: new Map([[113, 0.2], [999, 0.1]]), concurrency: 4 },
    (p) => progress.push(structuredClone(p)),
  );
  // The generator is seeded and time is simulated: the mix is the same on every run, exactly.
  assert.equal(report.sessions, 199);
  assert.deepEqual(report.totals, { requests: 199, manifest: 139, ad: 61, new: 139, errors: { '113': 47, '999': 13 } });
  assert.deepEqual(report.byOwner, {
    o1: { requests: 110, manifest: 75, ad: 38, new: 75, errors: { '113': 27, '999': 8 } },
    o2: { requests: 89, manifest: 64, ad: 23, new: 64, errors: { '113': 20, '999': 5 } },
  });
  const playbacks = paths.filter((p) => !p.startsWith('/play/s/'));
  assert.equal(report.totals.requests, playbacks.length);
  assert.equal(report.totals.requests, report.sessions);
  const errors = (report.totals.errors['113'] ?? 0) + (report.totals.errors['999'] ?? 0);
  assert.equal(report.totals.manifest + errors, report.sessions);
  assert.equal(paths.filter((p) => p.includes('ad=sim-ads')).length, report.totals.ad);
  // A good session plays like a player starting up: its variant, the first ad segment (with ads), the first content segment.
  assert.equal(paths.filter((p) => p.endsWith('/v/360p.m3u8')).length, report.totals.manifest);
  assert.equal(paths.filter((p) => p.endsWith('/a/0/ad/seg_00000.m4s')).length, report.totals.ad);
  assert.equal(paths.filter((p) => p.endsWith('/c/360p/seg_00000.m4s')).length, report.totals.manifest);
  assert.equal(paths.filter((p) => p.endsWith('seg_00001.m4s') || p.endsWith('init.mp4')).length, 0, 'nothing more');
  assert.equal(report.totals.new, report.totals.manifest);
  assert.deepEqual(sumTotals(Object.values(report.byOwner)), report.totals);
  assert.ok(maxInFlight <= 4);
  assert.deepEqual(progress.map((p) => p.sessions), [100, 199], 'progress once a second and at the end');
  assert.ok(playbacks.every((p) => /^\/play\/[^?]+\?tc=\d&exp=\d+&rn=[^&]+&ct=a&cid=a\d&oid=o\d&pbs=sim-[a-z0-9]+/.test(p)), playbacks[0]);
});

test('a failed request is counted apart, never in the totals', async () => {
  let now = 0;
  const simulator = new TrafficSimulator({
    now: () => now,
    wait: (ms) => ((now += ms), Promise.resolve()),
    random: seeded(1),
    get: () => Promise.reject(new Error('ECONNREFUSED')),
  });
  const report = await simulator.run({ owners, ratePerS: 10, durationMs: 1000, adShare: 0, errorShares: new Map(), concurrency: 2 });
  assert.deepEqual([report.sessions, report.failed, report.totals.requests], [9, 9, 0]);
});

test('a refusal throttled by the edge (429) is counted apart, never in the totals', async () => {
  let now = 0;
  const simulator = new TrafficSimulator({
    now: () => now,
    wait: (ms) => ((now += ms), Promise.resolve()),
    random: seeded(3),
    get: (path) => Promise.resolve(path.includes('tc=2') ? { status: 429, errorCode: null, body: '' } : fakeEdge(path)),
  });
  const report = await simulator.run({ owners, ratePerS: 50, durationMs: 1000, adShare: 0, errorShares: new Map([[113, 0.5]]), concurrency: 2 });
  assert.deepEqual([report.sessions, report.throttled, report.totals.requests], [43, 21, 22]);
  assert.deepEqual(report.totals.errors, {});
});
