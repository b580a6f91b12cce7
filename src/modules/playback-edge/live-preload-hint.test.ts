import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../platform/clock.js';
import { sequentialIds } from '../../platform/ids.js';
import { LowLatencyWindow } from '../../platform/media/ll-hls-window.js';
import { LiveWindowPublisher, readLiveWindow } from '../../platform/media/live-window.js';
import { liveDir } from '../../platform/media/media-layout.js';
import { NO_CMCD } from './cmcd.js';
import { BlockingReloads } from './live-blocking-reload.js';
import { FileLiveLibrary } from './live-library.js';
import type { PlaybackDirectory } from './playback-catalog.js';
import { MemoryEventSink } from './playback-events.js';
import { PlaybackRefusals } from './playback-refusals.js';
import { PlaybackSessionService, type SessionAnswer } from './playback-session.service.js';
import { SessionFirsts } from './session-firsts.js';
import { SessionTokens } from './session-token.js';
import { MemoryMediaLibrary } from './testing/memory-media-library.js';

const OWNER = 'o'.repeat(32);
const SLICER = 's'.repeat(32);

/**
 * Issue 37: a player that requests each EXT-X-PRELOAD-HINT the moment it appears (Shaka) must get
 * the part once its bytes exist (RFC 8216bis 6.2.6: the server holds it), never a 404 and never a
 * name the window does not publish. The real window writer and contract, the edge's session service.
 */
test('every preload hint, requested the moment it appears, is held and answered with a part whose file exists', async () => {
  const root = mkdtempSync(join(tmpdir(), 'playline-hint-'));
  const dir = liveDir(root, OWNER, SLICER);
  mkdirSync(dir, { recursive: true });
  const clock = new FakeClock(Date.UTC(2026, 10, 28, 4, 0, 0));
  const errors: unknown[] = [];
  const publisher = new LiveWindowPublisher(dir, () => Promise.resolve(), (err) => errors.push(err));
  const window: LowLatencyWindow = new LowLatencyWindow({
    segmentTargetS: 2, partTargetS: 0.44, windowSegments: 3, maxSegmentBytes: 1 << 20, declaredBandwidth: 800_000, dir, name: 'main', clock,
    onChange: () => publisher.publish({ version: 1, state: 'live', grace_ms: 0, index: 'index.m3u8', renditions: [window.snapshot()] }),
  });
  const events = new MemoryEventSink();
  const library = new MemoryMediaLibrary();
  const directory = { signingKeys: () => Promise.resolve(null) } as unknown as PlaybackDirectory;
  const tokens = new SessionTokens(Buffer.alloc(32, 9));
  const blocking = new BlockingReloads(clock, { total: 100, perNetwork: 100, prefixes: { ipv4Prefix: 24, ipv6Prefix: 64 }, pollMs: 50 });
  const sessions = new PlaybackSessionService({ clock, library, live: new FileLiveLibrary(root), tokens, directory, maxLifetimeMs: 6 * 3600_000, events, firsts: new SessionFirsts(), refusals: new PlaybackRefusals({ ids: sequentialIds(), directory, library, events }), blocking });
  const token = tokens.sign({ owner: OWNER, library: OWNER, assetId: SLICER, session: 'sess-1', requestedAt: clock.now(), expiresAt: Math.floor(clock.now() / 1000) + 600, plan: {}, live: true });
  const get = (file: string) => sessions.serve({ token, path: `c/${file}`, method: 'GET', url: `http://edge/play/s/t/c/${file}`, clientIp: '203.0.113.5', userAgent: 'ua', cmcd: NO_CMCD });
  /** Whether a request has been answered (it is held while not). */
  const answered = async (p: Promise<SessionAnswer>) => {
    let done = false;
    void p.then(() => (done = true));
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    return done;
  };
  let t = 0;
  /** The next 0.4 s fragment as it arrives, a keyframe every 2 s (five parts a segment). */
  const next = async () => {
    clock.advance(400);
    await window.add({ bytes: Buffer.from(`f${t}`), startS: t, durationS: 0.4, independent: Math.abs(t % 2) < 1e-9 });
    t = Math.round((t + 0.4) * 1000) / 1000;
  };
  try {
    await window.start({ bytes: Buffer.from('init'), tracks: [] });
    for (let i = 0; i < 6; i++) await next();
    const hints = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const hint = (await readLiveWindow(dir))?.renditions[0]?.preload_hint;
      assert.ok(hint !== undefined, 'a running window announces its next part');
      hints.add(hint);
      const answer = get(hint);
      assert.equal(await answered(answer), false, `${hint} is held while its bytes do not exist`);
      await next();
      clock.advance(50);
      const a = (await answer) as { kind: string; dir?: string; file?: string };
      assert.equal(a.kind, 'file', `${hint}: ${JSON.stringify(a)}`);
      assert.ok(existsSync(join(a.dir as string, a.file as string)), `${hint} exists when it is served`);
    }
    assert.ok([...hints].some((h) => h.endsWith('_p0.m4s')), 'hints across segment boundaries were asked for');
    assert.deepEqual(errors, []);
  } finally {
    await publisher.close();
    rmSync(root, { recursive: true, force: true });
  }
});
