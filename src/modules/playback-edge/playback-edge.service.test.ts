import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import { sequentialIds } from '../../platform/ids.js';
import type { AdDecisionServer } from './ad-decision.js';
import { SimulatedDrmProvider } from './drm-provider.js';
import type { AdConfig, PlaybackDirectory } from './playback-catalog.js';
import { PlaybackEdgeService, type PlaybackCall } from './playback-edge.service.js';
import { MemoryEventSink } from './playback-events.js';
import { signPlaybackUrl } from './playback-token.js';
import { MemorySingleUseGuard } from './single-use-guard.js';
import { FakeStopwatch } from './testing/edge-test-kit.js';

const OWNER = 'o'.repeat(32);
const KEY = 'api-key';

const adConfig: AdConfig = {
  owner: OWNER, name: 'pre', adServerUrl: 'https://ads.example.com', slotsS: [10], simulatedLatencyMs: 0, timeoutMs: 500, createdAt: 0, updatedAt: 0,
};

const directory = (overrides: Partial<PlaybackDirectory> = {}): PlaybackDirectory => ({
  signingKeys: (owner) => Promise.resolve(owner === OWNER ? [Buffer.from(KEY)] : null),
  appKey: () => Promise.resolve([]),
  adConfig: (_o, name) => Promise.resolve(name === 'pre' ? adConfig : undefined),
  drmPolicy: () => Promise.resolve(undefined),
  privateAsset: () => Promise.resolve(undefined),
  ...overrides,
});

const setup = (o: { directory?: PlaybackDirectory; ads?: AdDecisionServer } = {}) => {
  const clock = new FakeClock();
  const events = new MemoryEventSink();
  const service = new PlaybackEdgeService({
    clock,
    ids: sequentialIds(),
    directory: o.directory ?? directory(),
    drm: new SimulatedDrmProvider(),
    adDecisions: o.ads ?? { decide: () => Promise.resolve([{ id: 'ad', durationS: 10 }]) },
    sessions: new MemorySingleUseGuard({ clock, capacityPerOwner: 100, maxTtlMs: 86_400_000 }),
    drmSignatures: new MemorySingleUseGuard({ clock, capacityPerOwner: 100, maxTtlMs: 86_400_000 }),
    events,
    stopwatch: new FakeStopwatch(2).read,
  });
  const call = (params: Array<[string, string]> = [], owner = OWNER): PlaybackCall => {
    const url = signPlaybackUrl({ baseUrl: '', kind: 'asset', contentId: 'a1', owner, key: KEY, expiresAt: Math.floor(clock.now() / 1000) + 60, params }, () => 'n');
    return { kind: 'asset', contentId: 'a1', format: 'm3u8', rawQuery: url.slice(url.indexOf('?') + 1), clientIp: '127.0.0.1', url, userAgent: 'ua' };
  };
  return { clock, events, service, call };
};

test('a valid playback emits request, manifest and start of one session, with the measured latency', async () => {
  const { service, call, events } = setup();
  const result = await service.play(call([['pbs', 'session-0001']]));
  assert.equal(result.ok, true);
  assert.deepEqual(events.events.map((e) => [e.type, e.session_id]), [['request', 'session-0001'], ['manifest', 'session-0001'], ['start', 'session-0001']]);
  assert.equal(events.events[1]?.latency_ms, 2, 'two stopwatch readings 2 ms apart');
});

test('with ads: an ad event carries the decision latency, inside the manifest latency', async () => {
  const { service, call, events } = setup();
  assert.equal((await service.play(call([['ad', 'pre']]))).ok, true);
  const ad = events.events.find((e) => e.type === 'ad');
  const manifest = events.events.find((e) => e.type === 'manifest');
  assert.deepEqual([ad?.latency_ms, manifest?.latency_ms], [2, 6]);
});

test('a failure while checking is 999 / 500 and still reported to the owner', async () => {
  const broken = directory({ adConfig: () => Promise.reject(new Error('database gone')) });
  const { service, call, events } = setup({ directory: broken });
  const result = await service.play(call([['ad', 'pre']]));
  assert.ok(!result.ok);
  assert.deepEqual([result.failure.errorCode, result.failure.httpStatus, result.owner], [999, 500, OWNER]);
  assert.deepEqual(events.events.map((e) => e.type), ['request', 'error']);
});

test('an owner that is no workspace gets no events; an ad server failure is 999 and gives the session back', async () => {
  const { service, call, events } = setup({ ads: { decide: () => Promise.reject(new Error('ads down')) } });
  const orphan = await service.play(call([], 'nobody'));
  assert.ok(!orphan.ok && orphan.owner === null && orphan.failure.errorCode === 110);
  assert.equal(events.events.length, 0);
  const failed = await service.play(call([['ad', 'pre'], ['pbs', 'session-0002']]));
  assert.ok(!failed.ok && failed.failure.errorCode === 999 && failed.failure.httpStatus === 500);
  assert.equal(events.events.at(-1)?.session_id, 'session-0002');
  const retry = await service.play(call([['pbs', 'session-0002']]));
  assert.equal(retry.ok, true, 'the failed playback did not use up its pbs');
});

test('a refusal the gate does not admit emits nothing and is throttled; a valid playback or a 5xx never asks the gate', async () => {
  let asked = 0;
  const closedGate = () => {
    asked += 1;
    return Promise.resolve({ admitted: false as const, retryAfterS: 7 });
  };
  const { service, call, events } = setup({ directory: directory({ adConfig: () => Promise.reject(new Error('database gone')) }) });
  const valid = call();
  const forged = { ...valid, rawQuery: valid.rawQuery.replace(/sig=[0-9a-f]+$/, `sig=${'0'.repeat(64)}`), refusalGate: closedGate };
  const throttled = await service.play(forged);
  assert.ok(!throttled.ok);
  assert.deepEqual([throttled.failure.errorCode, throttled.throttled, throttled.owner], [110, { retryAfterS: 7 }, null]);
  assert.equal(events.events.length, 0);

  assert.equal((await service.play({ ...call(), refusalGate: closedGate })).ok, true);
  const failed = await service.play({ ...call([['ad', 'pre']]), refusalGate: closedGate });
  assert.ok(!failed.ok && failed.failure.httpStatus === 500 && failed.throttled === undefined);
  assert.equal(asked, 1, 'only the forged URL asked');
  assert.deepEqual(events.events.map((e) => e.type), ['request', 'manifest', 'start', 'request', 'error']);
});
