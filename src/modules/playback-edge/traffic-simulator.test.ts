import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sumTotals, TrafficSimulator, type SimulatedOwner, type TrafficProgress } from './traffic-simulator.js';

/** A seeded generator, so the session mix is the same every run. */
const seeded = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

const owners: SimulatedOwner[] = ['o1', 'o2'].map((owner) => ({ owner, apiKey: `${owner}-key`, appKeySecret: 's', contentOwner: null, assets: ['a1', 'a2', 'a3'] }));

test('sessions start at the rate for the duration; totals count what the edge answered', async () => {
  let now = 0;
  const paths: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const simulator = new TrafficSimulator({
    now: () => now,
    wait: (ms) => {
      now += ms;
      return Promise.resolve();
    },
    random: seeded(7),
    async get(path) {
      paths.push(path);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await Promise.resolve();
      inFlight -= 1;
      if (path.includes('tc=2')) return { status: 400, errorCode: 113 };
      if (path.includes('.mpd?')) return { status: 404, errorCode: 999 };
      return { status: 200, errorCode: null };
    },
  });
  const progress: TrafficProgress[] = [];
  const report = await simulator.run(
    { owners, ratePerS: 100, durationMs: 2000, adShare: 0.5, errorShares: new Map([[113, 0.2], [999, 0.1]]), concurrency: 4 },
    (p) => progress.push(structuredClone(p)),
  );
  // The generator is seeded and time is simulated: the mix is the same on every run, exactly.
  assert.equal(report.sessions, 199);
  assert.equal(report.totals.requests, paths.length);
  assert.deepEqual(report.totals, { requests: 199, manifest: 139, ad: 61, new: 139, errors: { '113': 47, '999': 13 } });
  assert.deepEqual(report.byOwner, {
    o1: { requests: 110, manifest: 75, ad: 38, new: 75, errors: { '113': 27, '999': 8 } },
    o2: { requests: 89, manifest: 64, ad: 23, new: 64, errors: { '113': 20, '999': 5 } },
  });
  assert.equal(paths.filter((p) => p.includes('ad=sim-ads')).length, report.totals.ad);
  assert.deepEqual(sumTotals(Object.values(report.byOwner)), report.totals);
  assert.ok(maxInFlight <= 4);
  assert.deepEqual(progress.map((p) => p.sessions), [100, 199], 'progress once a second and at the end');
  assert.ok(paths.every((p) => /^\/play\/[^?]+\?tc=\d&exp=\d+&rn=[^&]+&ct=a&cid=a\d&oid=o\d&pbs=sim-[a-z0-9]+/.test(p)), paths[0]);
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
    get: (path) => Promise.resolve(path.includes('tc=2') ? { status: 429, errorCode: null } : { status: 200, errorCode: null }),
  });
  const report = await simulator.run({ owners, ratePerS: 50, durationMs: 1000, adShare: 0, errorShares: new Map([[113, 0.5]]), concurrency: 2 });
  assert.deepEqual([report.sessions, report.throttled, report.totals.requests], [49, 24, 25]);
  assert.deepEqual(report.totals.errors, {});
});
