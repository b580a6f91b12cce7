import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import { sequentialIds } from '../../platform/ids.js';
import { NO_CMCD } from './cmcd.js';
import { BlockingReloads, playlistEdgeOf, reached, reloadTargetOf } from './live-blocking-reload.js';
import type { LiveLibrary } from './live-library.js';
import type { PlaybackDirectory } from './playback-catalog.js';
import { MemoryEventSink } from './playback-events.js';
import { PlaybackRefusals } from './playback-refusals.js';
import { PlaybackSessionService, type SessionAnswer } from './playback-session.service.js';
import { SessionFirsts } from './session-firsts.js';
import { SessionTokens } from './session-token.js';
import { MemoryMediaLibrary } from './testing/memory-media-library.js';

const OWNER = 'o'.repeat(32);
const SLICER = 's'.repeat(32);
const MSN = 20261128040000;
/** Sessions here play their own workspace's content: the shares are never asked. */
const NO_SHARES: Pick<PlaybackDirectory, 'privateAsset' | 'sharesWith'> = { privateAsset: () => Promise.resolve(undefined), sharesWith: () => Promise.resolve(false) };

/** A live media playlist as LowLatencyWindow writes it: `complete` segments of 4 parts, then `open` parts of the next. */
function playlist(complete: number, open: number): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:9', '#EXT-X-TARGETDURATION:2', '#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5', '#EXT-X-PART-INF:PART-TARGET=0.5', `#EXT-X-MEDIA-SEQUENCE:${MSN}`, '#EXT-X-MAP:URI="init_main.mp4"'];
  for (let i = 0; i < complete; i++) {
    for (let p = 0; p < 4; p++) lines.push(`#EXT-X-PART:DURATION=0.5,URI="seg_main_${MSN + i}_p${p}.m4s"${p === 0 ? ',INDEPENDENT=YES' : ''}`);
    lines.push('#EXTINF:2,', `seg_main_${MSN + i}.m4s`);
  }
  for (let p = 0; p < open; p++) lines.push(`#EXT-X-PART:DURATION=0.5,URI="seg_main_${MSN + complete}_p${p}.m4s"`);
  lines.push(`#EXT-X-PRELOAD-HINT:TYPE=PART,URI="seg_main_${MSN + complete}_p${open}.m4s"`);
  return `${lines.join('\n')}\n`;
}

describe('the live edge of a playlist and the blocking-reload query', () => {
  test('the next msn counts complete segments; parts after the last one are the open segment\'s', () => {
    assert.deepEqual(playlistEdgeOf(playlist(2, 3)), { nextMsn: MSN + 2, openParts: 3, targetDurationS: 2 });
    assert.deepEqual(playlistEdgeOf(playlist(3, 0)), { nextMsn: MSN + 3, openParts: 0, targetDurationS: 2 });
    const edge = playlistEdgeOf(playlist(2, 3));
    assert.equal(reached(edge, { msn: MSN + 1, part: undefined }), true);
    assert.equal(reached(edge, { msn: MSN + 2, part: undefined }), false, 'without _HLS_part the segment must be complete');
    assert.equal(reached(edge, { msn: MSN + 2, part: 2 }), true);
    assert.equal(reached(edge, { msn: MSN + 2, part: 3 }), false, 'the next part is not there yet');
  });

  test('_HLS_msn and _HLS_part are read, bad ones named', () => {
    assert.equal(reloadTargetOf(new URLSearchParams('')), undefined);
    assert.deepEqual(reloadTargetOf(new URLSearchParams('_HLS_msn=12&_HLS_part=3')), { msn: 12, part: 3 });
    assert.deepEqual(reloadTargetOf(new URLSearchParams('_HLS_msn=12')), { msn: 12, part: undefined });
    assert.match(String(reloadTargetOf(new URLSearchParams('_HLS_part=3'))), /needs _HLS_msn/);
    assert.match(String(reloadTargetOf(new URLSearchParams('_HLS_msn=-1'))), /_HLS_msn/);
    assert.match(String(reloadTargetOf(new URLSearchParams('_HLS_msn=1&_HLS_part=x'))), /_HLS_part/);
    assert.match(String(reloadTargetOf(new URLSearchParams('_HLS_msn=99999999999999999999'))), /_HLS_msn/);
  });
});

describe('BlockingReloads', () => {
  const limits = { total: 3, perNetwork: 2, prefixes: { ipv4Prefix: 24, ipv6Prefix: 64 }, pollMs: 50 };

  test('one read per poll for every request held on a playlist; each answered once its own part is there', async () => {
    const clock = new FakeClock();
    const holds = new BlockingReloads(clock, limits);
    let text = playlist(1, 0);
    let reads = 0;
    const read = () => {
      reads++;
      return Promise.resolve(text);
    };
    const first = holds.hold('k', '10.0.0.1', read, (t) => reached(playlistEdgeOf(t), { msn: MSN + 1, part: 0 }), 6000);
    const second = holds.hold('k', '10.0.1.1', read, (t) => reached(playlistEdgeOf(t), { msn: MSN + 1, part: 1 }), 6000);
    clock.advance(50);
    await new Promise((r) => setImmediate(r));
    assert.equal(reads, 1, 'both requests share one read');
    assert.equal(holds.holding, 2);
    text = playlist(1, 1);
    clock.advance(50);
    assert.equal((await first).kind, 'ready');
    assert.equal(holds.holding, 1, 'the second still waits for its part');
    text = playlist(1, 2);
    clock.advance(50);
    const answered = await second;
    assert.equal(answered.kind, 'ready');
    assert.equal(holds.holding, 0);
  });

  test('a part that never comes is answered at the time limit; a client that leaves frees its slot', async () => {
    const clock = new FakeClock();
    const holds = new BlockingReloads(clock, limits);
    const read = () => Promise.resolve(playlist(1, 0));
    const never = holds.hold('k', '10.0.0.1', read, () => false, 6000);
    const left = new AbortController();
    const leaving = holds.hold('k', '10.0.0.2', read, () => false, 6000, left.signal);
    left.abort();
    assert.equal((await leaving).kind, 'timeout');
    assert.equal(holds.holding, 1);
    clock.advance(5999);
    await new Promise((r) => setImmediate(r));
    assert.equal(holds.holding, 1);
    clock.advance(1);
    assert.equal((await never).kind, 'timeout');
    assert.equal(holds.holding, 0);
  });

  test('abuse: one client network cannot hold more than its share, nor everyone more than the instance cap', async () => {
    const clock = new FakeClock();
    const holds = new BlockingReloads(clock, limits);
    const read = () => Promise.resolve(playlist(1, 0));
    const held = [holds.hold('k', '10.0.0.1', read, () => false, 6000), holds.hold('k', '10.0.0.200', read, () => false, 6000)];
    // Another address of the same /24 buys nothing more.
    assert.deepEqual(await holds.hold('k', '10.0.0.77', read, () => false, 6000), { kind: 'full', scope: 'network' });
    held.push(holds.hold('k', '10.9.0.1', read, () => false, 6000));
    assert.deepEqual(await holds.hold('k', '10.8.0.1', read, () => false, 6000), { kind: 'full', scope: 'total' });
    assert.equal(holds.holding, 3);
    clock.advance(6000);
    for (const h of held) assert.equal((await h).kind, 'timeout');
    assert.equal(holds.holding, 0, 'every slot given back');
  });
});

/** A live library over one mutable media playlist. */
class OnePlaylistLibrary implements LiveLibrary {
  text = playlist(1, 0);
  find() {
    return Promise.resolve(undefined);
  }
  playlist(_owner: string, _slicer: string, name: string): Promise<string | undefined> {
    return Promise.resolve(name === 'media_main' ? this.text : undefined);
  }
  dirOf(owner: string, slicerId: string): string {
    return `/nonexistent/live/${owner}/${slicerId}`;
  }
}

describe('blocking reloads of a live session', () => {
  const setup = (perNetwork = 64) => {
    const clock = new FakeClock();
    const events = new MemoryEventSink();
    const library = new MemoryMediaLibrary();
    const directory = { signingKeys: () => Promise.resolve(null) } as unknown as PlaybackDirectory;
    const refusals = new PlaybackRefusals({ ids: sequentialIds(), directory, library, events });
    const tokens = new SessionTokens(Buffer.alloc(32, 9));
    const live = new OnePlaylistLibrary();
    const blocking = new BlockingReloads(clock, { total: 10_000, perNetwork, prefixes: { ipv4Prefix: 24, ipv6Prefix: 64 } });
    const sessions = new PlaybackSessionService({ clock, library, live, tokens, directory: NO_SHARES, maxLifetimeMs: 6 * 3600_000, events, firsts: new SessionFirsts(), refusals, blocking });
    const token = (session: string) => tokens.sign({ owner: OWNER, library: OWNER, assetId: SLICER, session, requestedAt: clock.now(), expiresAt: Math.floor(clock.now() / 1000) + 600, plan: {}, live: true });
    const get = (query: string, o: { session?: string; clientIp?: string; path?: string } = {}) =>
      sessions.serve({ token: token(o.session ?? 'sess-1'), path: o.path ?? 'v/media_main.m3u8', method: 'GET', url: `http://edge/play/s/t/${o.path ?? 'v/media_main.m3u8'}${query}`, clientIp: o.clientIp ?? '203.0.113.5', userAgent: 'ua', cmcd: NO_CMCD });
    return { clock, events, live, blocking, get };
  };
  /** Lets the session service reach its hold (it reads the token and the playlist first). */
  const holding = async (blocking: BlockingReloads, n: number) => {
    for (let i = 0; i < 50 && blocking.holding !== n; i++) await new Promise((r) => setImmediate(r));
    assert.equal(blocking.holding, n);
  };
  const settled = async (p: Promise<SessionAnswer>) => {
    let done = false;
    void p.then(() => (done = true));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    return done;
  };

  test('the request for the next part answers once that part exists, not before, with the parts under the session; one manifest event', async () => {
    const { clock, events, live, blocking, get } = setup();
    const answer = get(`?_HLS_msn=${MSN + 1}&_HLS_part=0`);
    await holding(blocking, 1);
    clock.advance(200);
    assert.equal(await settled(answer), false, 'held while the part does not exist');
    assert.equal(events.events.filter((e) => e.type === 'manifest').length, 0);
    live.text = playlist(1, 1);
    clock.advance(50);
    const a = (await answer) as { kind: string; text: string };
    assert.equal(a.kind, 'playlist');
    assert.match(a.text, new RegExp(`#EXT-X-PART:DURATION=0.5,URI="../c/seg_main_${MSN + 1}_p0.m4s"`));
    assert.match(a.text, new RegExp(`#EXT-X-PRELOAD-HINT:TYPE=PART,URI="../c/seg_main_${MSN + 1}_p1.m4s"`));
    assert.match(a.text, /^#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES/m);
    assert.equal(events.events.filter((e) => e.type === 'manifest').length, 1);
    // A part already there is answered at once; a plain reload is not held.
    assert.equal(await settled(get(`?_HLS_msn=${MSN + 1}&_HLS_part=0`)), true);
    assert.equal(await settled(get('')), true);
    assert.equal(events.events.filter((e) => e.type === 'manifest').length, 1, 'still one manifest per session');
  });

  test('503 with Retry-After after three target durations; 400 far past the edge or _HLS_part alone', async () => {
    const { clock, blocking, get } = setup();
    const answer = get(`?_HLS_msn=${MSN + 1}`);
    await holding(blocking, 1);
    clock.advance(5950);
    assert.equal(await settled(answer), false);
    clock.advance(50);
    const late = (await answer) as { kind: string; error: { status: number }; retryAfterS: number };
    assert.deepEqual([late.kind, late.error.status, late.retryAfterS], ['problem', 503, 1]);
    const far = (await get(`?_HLS_msn=${MSN + 4}`)) as { kind: string; error: { status: number; detail: string } };
    assert.deepEqual([far.kind, far.error.status], ['problem', 400]);
    assert.match(far.error.detail, /more than two segments past the live edge/);
    const alone = (await get('?_HLS_part=1')) as { kind: string; error: { status: number } };
    assert.deepEqual([alone.kind, alone.error.status], ['problem', 400]);
  });

  // Before LL-HLS the edge ignored _HLS_msn and answered at once; with holds and no cap, one
  // network could keep any number of requests (and their sockets) open for 6 s each.
  test('abuse: a client network holding its share of blocking reloads gets 429 for more; other networks are still held and served', async () => {
    const { clock, live, blocking, get } = setup(4);
    const mine = Array.from({ length: 4 }, (_, i) => get(`?_HLS_msn=${MSN + 1}&_HLS_part=0`, { session: `s-${i}`, clientIp: `198.51.100.${i + 1}` }));
    await holding(blocking, 4);
    const over = (await get(`?_HLS_msn=${MSN + 1}&_HLS_part=0`, { session: 's-9', clientIp: '198.51.100.250' })) as { kind: string; error: { status: number }; retryAfterS: number };
    assert.deepEqual([over.kind, over.error.status, over.retryAfterS], ['problem', 429, 1]);
    const other = get(`?_HLS_msn=${MSN + 1}&_HLS_part=0`, { session: 's-10', clientIp: '192.0.2.1' });
    await holding(blocking, 5);
    live.text = playlist(1, 1);
    clock.advance(50);
    for (const a of [...mine, other]) assert.equal((await a).kind, 'playlist');
    assert.equal(blocking.holding, 0);
  });
});
