import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { liveWindowOf } from '../../platform/media/live-window.test-support.js';
import type { LiveRendition } from '../../platform/media/live-window.js';
import { liveFileKind, liveMultivariantOf, liveVariantOf } from './live-session.js';

const MSN = 20261122205312;

describe('live session playlists (rendered from the live window contract)', () => {
  test('the multivariant playlist names each variant under the session, relative to /play/event/, described from the window', () => {
    const state = liveWindowOf({ msn: MSN, complete: 1, open: 0, name: '720p' });
    assert.equal(
      liveMultivariantOf('TOKEN', state),
      '#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-STREAM-INF:BANDWIDTH=800000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=640x360\n../s/TOKEN/v/media_720p.m3u8\n',
    );
  });

  test('a media playlist keeps its live tags (no ENDLIST), with init, segments, parts and the hint at ../c/', () => {
    const rendition = liveWindowOf({ msn: MSN, complete: 1, open: 1 }).renditions[0] as LiveRendition;
    const text = liveVariantOf(rendition, false);
    assert.match(text, /^#EXT-X-MAP:URI="\.\.\/c\/init_main\.mp4"$/m);
    assert.match(text, new RegExp(`^#EXTINF:2,\n\\.\\./c/seg_main_${MSN}\\.m4s$`, 'm'));
    assert.match(text, new RegExp(`^#EXT-X-PART:DURATION=0.5,URI="\\.\\./c/seg_main_${MSN + 1}_p0\\.m4s",INDEPENDENT=YES$`, 'm'));
    assert.match(text, new RegExp(`^#EXT-X-PRELOAD-HINT:TYPE=PART,URI="\\.\\./c/seg_main_${MSN + 1}_p1\\.m4s"$`, 'm'));
    assert.match(text, new RegExp(`^#EXT-X-MEDIA-SEQUENCE:${MSN}$`, 'm'));
    assert.doesNotMatch(text, /ENDLIST/);
  });

  test('an ended event: EXT-X-ENDLIST, complete segments only (no part, no hint)', () => {
    const rendition = liveWindowOf({ msn: MSN, complete: 2, open: 3 }).renditions[0] as LiveRendition;
    const text = liveVariantOf(rendition, true);
    assert.match(text, /#EXT-X-ENDLIST\n$/);
    assert.doesNotMatch(text, /#EXT-X-PART:|#EXT-X-PRELOAD-HINT/);
    assert.equal(text.match(/^#EXTINF/gm)?.length, 2);
  });

  test('a session fetches only init and media segments of the window', () => {
    assert.equal(liveFileKind('init.mp4'), 'init');
    assert.equal(liveFileKind('seg_720p_20261122205312.m4s'), 'segment');
    for (const bad of ['index.m3u8', 'live.json', '.slicer-process.json', '../x.m4s', 'a/b.m4s', 'media_main.m3u8.tmp']) assert.equal(liveFileKind(bad), undefined, bad);
  });
});
