import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import { sequentialIds } from '../../platform/ids.js';
import type { AdDecisionServer } from './ad-decision.js';
import { NO_CMCD } from './cmcd.js';
import { SimulatedDrmProvider } from './drm-provider.js';
import type { AdConfig, PlaybackDirectory } from './playback-catalog.js';
import { PlaybackEdgeService, type PlaybackCall } from './playback-edge.service.js';
import { MemoryEventSink } from './playback-events.js';
import { PlaybackRefusals } from './playback-refusals.js';
import { PlaybackSessionService, type SessionCall } from './playback-session.service.js';
import { signPlaybackUrl } from './playback-token.js';
import { SessionFirsts } from './session-firsts.js';
import { SessionTokens } from './session-token.js';
import { MemorySingleUseGuard } from './single-use-guard.js';
import { FakeStopwatch, mediaUris, variantUris } from './testing/edge-test-kit.js';
import { manifestOf, MemoryMediaLibrary } from './testing/memory-media-library.js';

const OWNER = 'o'.repeat(32);
const KEY = 'api-key';

const adConfig: AdConfig = {
  owner: OWNER, name: 'pre', adServerUrl: 'https://ads.example.com', adAssetIds: ['ad-1'], simulatedLatencyMs: 0, timeoutMs: 500, createdAt: 0, updatedAt: 0,
};

const directory = (overrides: Partial<PlaybackDirectory> = {}): PlaybackDirectory => ({
  signingKeys: (owner) => Promise.resolve(owner === OWNER ? [Buffer.from(KEY)] : null),
  appKey: () => Promise.resolve([]),
  adConfig: (_o, name) => Promise.resolve(name === 'pre' ? adConfig : undefined),
  drmPolicy: () => Promise.resolve(undefined),
  privateAsset: () => Promise.resolve(undefined),
  sharesWith: () => Promise.resolve(false),
  ...overrides,
});

const setup = (o: { directory?: PlaybackDirectory; ads?: AdDecisionServer } = {}) => {
  const clock = new FakeClock();
  const events = new MemoryEventSink();
  const library = new MemoryMediaLibrary();
  library.put(OWNER, 'a1', manifestOf([4, 4, 2]));
  library.put(OWNER, 'ad-1', manifestOf([3], [{ name: 'ad360', height: 360, bandwidth: 700_000 }, { name: 'ad720', height: 720, bandwidth: 2_000_000 }]));
  const ids = sequentialIds();
  const dir = o.directory ?? directory();
  const refusals = new PlaybackRefusals({ ids, directory: dir, library, events });
  const tokens = new SessionTokens(Buffer.alloc(32, 9));
  const service = new PlaybackEdgeService({
    clock,
    ids,
    directory: dir,
    library,
    drm: new SimulatedDrmProvider(),
    adDecisions: o.ads ?? { decide: () => Promise.resolve(['ad-1']) },
    sessions: new MemorySingleUseGuard({ clock, capacityPerOwner: 100, maxTtlMs: 86_400_000 }),
    drmSignatures: new MemorySingleUseGuard({ clock, capacityPerOwner: 100, maxTtlMs: 86_400_000 }),
    maxLifetimeMs: 6 * 3600_000,
    events,
    tokens,
    refusals,
    stopwatch: new FakeStopwatch(2).read,
  });
  const sessions = new PlaybackSessionService({ clock, library, tokens, directory: dir, maxLifetimeMs: 6 * 3600_000, events, firsts: new SessionFirsts(), refusals });
  const call = (params: Array<[string, string]> = [], owner = OWNER, ttlS = 60): PlaybackCall => {
    const url = signPlaybackUrl({ baseUrl: '', kind: 'asset', contentId: 'a1', owner, key: KEY, expiresAt: Math.floor(clock.now() / 1000) + ttlS, params }, () => 'n');
    return { kind: 'asset', contentId: 'a1', format: 'm3u8', rawQuery: url.slice(url.indexOf('?') + 1), clientIp: '127.0.0.1', url, userAgent: 'ua' };
  };
  /** A request under a session path, e.g. `/play/s/<token>/v/360p.m3u8`. */
  const get = (path: string, extra: Partial<SessionCall> = {}) => {
    const [, , , token = '', ...rest] = path.split('/');
    return sessions.serve({ token, path: rest.join('/'), method: 'GET', url: `http://edge${path}`, clientIp: '127.0.0.1', userAgent: 'ua', cmcd: NO_CMCD, ...extra });
  };
  return { clock, events, library, service, sessions, call, get };
};

const playlistOf = async (answer: Promise<unknown>): Promise<string> => {
  const a = (await answer) as { kind: string; text?: string };
  assert.equal(a.kind, 'playlist', JSON.stringify(a));
  return a.text as string;
};

test('a valid playback emits only its request; its first variant playlist emits manifest with the latency since the request', async () => {
  const { service, call, get, clock, events } = setup();
  const result = await service.play(call([['pbs', 'session-0001']]));
  assert.ok(result.ok);
  assert.deepEqual(events.events.map((e) => [e.type, e.session_id]), [['request', 'session-0001']]);
  const [first, second] = variantUris('/play/a1.m3u8', result.playlist);
  assert.match(first ?? '', /^\/play\/s\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}\/v\/360p\.m3u8$/);
  assert.match(second ?? '', /\/v\/180p\.m3u8$/);
  clock.advance(42);
  await playlistOf(get(first as string));
  await playlistOf(get(second as string));
  await playlistOf(get(first as string));
  assert.deepEqual(events.events.slice(1).map((e) => [e.type, 'latency_ms' in e ? e.latency_ms : null]), [['manifest', 42]], 'once per session');
});

test('start comes with the first content segment, not the init segment; HEAD is no playback', async () => {
  const { service, call, get, events } = setup();
  const result = await service.play(call());
  assert.ok(result.ok);
  const variant = variantUris('/play/a1.m3u8', result.playlist)[0] as string;
  const { maps, segments } = mediaUris(variant, await playlistOf(get(variant)));
  assert.equal(maps.length, 1);
  const init = await get(maps[0] as string);
  assert.equal(init.kind, 'file');
  if (init.kind === 'file') init.served();
  const head = await get(segments[0] as string, { method: 'HEAD' });
  if (head.kind === 'file') head.served();
  assert.deepEqual(events.events.map((e) => e.type), ['request', 'manifest']);
  for (const path of segments) {
    const seg = await get(path);
    assert.ok(seg.kind === 'file' && seg.file.startsWith('360p/seg_'), JSON.stringify(seg));
    if (seg.kind === 'file') seg.served();
  }
  assert.deepEqual(events.events.map((e) => e.type), ['request', 'manifest', 'start']);
  assert.equal(events.events.at(-1)?.session_id, result.session);
});

test('with ads: every variant starts with the ad, its closest rendition and its own init, then a discontinuity and the content', async () => {
  const { service, call, get, events } = setup();
  const result = await service.play(call([['ad', 'pre']]));
  assert.ok(result.ok, JSON.stringify(result));
  const [hd, sd] = variantUris('/play/a1.m3u8', result.playlist) as [string, string];
  assert.match(result.playlist, /BANDWIDTH=900000,/, 'the 360p variant covers its 360p ad (700 kb/s)');
  const text = await playlistOf(get(sd));
  assert.deepEqual(text.split('\n').filter((l) => /^#EXT-X-(MAP|DISCONTINUITY)|^[^#]/.test(l) && l), [
    '#EXT-X-MAP:URI="../a/0/ad360/init.mp4"', '../a/0/ad360/seg_00000.m4s',
    '#EXT-X-DISCONTINUITY',
    '#EXT-X-MAP:URI="../c/180p/init.mp4"', '../c/180p/seg_00000.m4s', '../c/180p/seg_00001.m4s', '../c/180p/seg_00002.m4s',
  ]);
  const { segments } = mediaUris(hd, await playlistOf(get(hd)));
  assert.match(segments[0] as string, /\/a\/0\/ad360\/seg_00000\.m4s$/, 'the 360p content plays the 360p ad');
  for (const path of segments.slice(0, 2)) {
    const file = await get(path);
    if (file.kind === 'file') file.served();
  }
  assert.deepEqual(events.events.map((e) => [e.type, 'latency_ms' in e ? e.latency_ms : undefined]), [['request', undefined], ['manifest', 0], ['ad', 2], ['start', undefined]]);
});

test('an ad asset that is not packaged is a 122; a failing ad server is 999 and gives the pbs back', async () => {
  const missing = setup();
  missing.library.remove(OWNER, 'ad-1');
  const refused = await missing.service.play(missing.call([['ad', 'pre']]));
  assert.ok(!refused.ok && refused.failure.errorCode === 122 && refused.failure.httpStatus === 422, JSON.stringify(refused));

  const { service, call, events } = setup({ ads: { decide: () => Promise.reject(new Error('ads down')) } });
  const failed = await service.play(call([['ad', 'pre'], ['pbs', 'session-0002']]));
  assert.ok(!failed.ok && failed.failure.errorCode === 999 && failed.failure.httpStatus === 500);
  assert.equal(events.events.at(-1)?.session_id, 'session-0002');
  assert.equal((await service.play(call([['pbs', 'session-0002']]))).ok, true, 'the failed playback did not use up its pbs');
});

test('an asset the library does not hold is 999 / 404 and its refusal counts for the workspace only; a known asset\'s refusal does not', async () => {
  const { service, call, library, events } = setup();
  const forged = call();
  const refusedKnown = await service.play({ ...forged, rawQuery: forged.rawQuery.replace(/sig=[0-9a-f]+$/, `sig=${'0'.repeat(64)}`) });
  assert.ok(!refusedKnown.ok && refusedKnown.failure.errorCode === 110);
  library.remove(OWNER, 'a1');
  const result = await service.play(call());
  assert.ok(!result.ok);
  assert.deepEqual([result.failure.errorCode, result.failure.httpStatus, result.owner], [999, 404, OWNER]);
  assert.deepEqual(events.events.map((e) => [e.type, 'workspace_only' in e ? e.workspace_only : false]), [['request', false], ['error', false], ['request', true], ['error', true]]);
});

test('without pbs the player\'s CMCD sid names the session; a malformed sid does not', async () => {
  const { service, call } = setup();
  const sid = '6e2fb550-c457-11e9-bb97-0800200c9a66';
  const named = await service.play({ ...call(), cmcd: { sid, bufferStarved: false } });
  assert.ok(named.ok && named.session === sid);
  const bad = await service.play({ ...call(), cmcd: { sid: 'not a session id!', bufferStarved: false } });
  assert.ok(bad.ok && bad.session !== 'not a session id!');
  const pbs = await service.play({ ...call([['pbs', 'session-0003']]), cmcd: { sid, bufferStarved: false } });
  assert.ok(pbs.ok && pbs.session === 'session-0003', 'pbs wins');
});

test('a refused playback is known by the session a valid one would have: pbs, else the CMCD sid, else a new id per request', async () => {
  const { service, call, events } = setup();
  const sid = '6e2fb550-c457-11e9-bb97-0800200c9a66';
  const forge = (c: PlaybackCall): PlaybackCall => ({ ...c, rawQuery: c.rawQuery.replace(/sig=[0-9a-f]+$/, `sig=${'0'.repeat(64)}`) });
  const sessionOf = async (c: PlaybackCall) => {
    const refused = await service.play(forge(c));
    assert.ok(!refused.ok && refused.failure.errorCode === 110, JSON.stringify(refused));
    const error = events.events.at(-1);
    assert.equal(error?.type, 'error');
    assert.equal(events.events.at(-2)?.session_id, error?.session_id, 'the request and the error of one refusal share the session');
    return error?.session_id;
  };
  const bySid = [await sessionOf({ ...call(), cmcd: { sid, bufferStarved: false } }), await sessionOf({ ...call(), cmcd: { sid, bufferStarved: false } })];
  assert.deepEqual(bySid, [sid, sid], 'refusals sharing a CMCD sid are one session');
  assert.equal(await sessionOf({ ...call([['pbs', 'session-0005']]), cmcd: { sid, bufferStarved: false } }), 'session-0005', 'pbs wins, as for a valid playback');
  const fresh = [await sessionOf({ ...call(), cmcd: { sid: 'not a session id!', bufferStarved: false } }), await sessionOf(call())];
  assert.ok(fresh[0] !== fresh[1] && !fresh.includes(sid), 'neither: a new id per request');
});

test('an expired session is 104 / 410 with an error event of that session; a forged token is 110 / 403', async () => {
  const { service, call, get, clock, events } = setup();
  const result = await service.play(call([['pbs', 'session-0004']], OWNER, 30));
  assert.ok(result.ok);
  const variant = variantUris('/play/a1.m3u8', result.playlist)[0] as string;
  clock.advance(31_000);
  const expired = await get(variant);
  assert.ok(expired.kind === 'refused');
  assert.deepEqual([expired.failure.errorCode, expired.failure.httpStatus, expired.owner], [104, 410, OWNER]);
  const error = events.events.at(-1);
  assert.ok(error?.type === 'error');
  assert.deepEqual([error.session_id, error.error_code, error.asset_id, error.url], ['session-0004', 104, 'a1', `http://edge${variant}`]);

  const forgedPath = variant.replace(/\.([A-Za-z0-9_-]{43})\//, (_m, mac: string) => `.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}/`);
  const forged = await get(forgedPath);
  assert.ok(forged.kind === 'refused' && forged.failure.errorCode === 110 && forged.owner === OWNER, 'linked to the workspace it names, which exists');
  assert.equal(events.events.at(-1)?.type, 'error');
  const junk = await get('/play/s/not-a-token/v/360p.m3u8');
  assert.ok(junk.kind === 'refused' && junk.failure.errorCode === 110 && junk.owner === null, 'nothing to link: no event');
  assert.equal(events.events.filter((e) => e.type === 'error').length, 2);
});

test('files a session does not have are 999 / 404: another path, another rendition, a file of the asset\'s directory the manifest does not name', async () => {
  const { service, call, get } = setup();
  const result = await service.play(call());
  assert.ok(result.ok);
  const base = (variantUris('/play/a1.m3u8', result.playlist)[0] as string).replace(/v\/360p\.m3u8$/, '');
  for (const path of ['v/1080p.m3u8', 'c/manifest.json', 'c/360p/playlist.m3u8', 'a/0/ad360/seg_00000.m4s', 'x/anything']) {
    const answer = await get(`${base}${path}`);
    assert.ok(answer.kind === 'refused' && answer.failure.errorCode === 999 && answer.failure.httpStatus === 404, `${path}: ${JSON.stringify(answer)}`);
  }
});

test('history signals: start carries startup_ms, a CMCD buffer starvation emits rebuffer', async () => {
  const { service, call, get, clock, events } = setup();
  const result = await service.play(call([['pbs', 'session-0005']]));
  assert.ok(result.ok);
  const variant = variantUris('/play/a1.m3u8', result.playlist)[0] as string;
  const { segments } = mediaUris(variant, await playlistOf(get(variant)));
  clock.advance(250);
  const first = await get(segments[0] as string);
  if (first.kind === 'file') first.served();
  await get(segments[1] as string, { cmcd: { bufferStarved: true } });
  assert.deepEqual(events.events.slice(2).map((e) => [e.type, 'startup_ms' in e ? e.startup_ms : undefined]), [['start', 250], ['rebuffer', undefined]]);
  assert.equal(events.events.at(-1)?.session_id, 'session-0005');

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
  assert.deepEqual(events.events.map((e) => e.type), ['request', 'request', 'error']);
});
