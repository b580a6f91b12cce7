import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { liveFileKind, liveMultivariantOf, liveVariantOf } from './live-session.js';

describe('live session playlists', () => {
  test('the multivariant playlist names each variant under the session, relative to /play/event/', () => {
    const index = '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-STREAM-INF:BANDWIDTH=655600,RESOLUTION=320x180,CODECS="avc1.42c014,mp4a.40.2"\nmedia_720p.m3u8\n\n#EXT-X-STREAM-INF:BANDWIDTH=1\n../../escape.m3u8\n';
    assert.equal(
      liveMultivariantOf('TOKEN', index),
      '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-STREAM-INF:BANDWIDTH=655600,RESOLUTION=320x180,CODECS="avc1.42c014,mp4a.40.2"\n../s/TOKEN/v/media_720p.m3u8\n',
    );
  });

  test('a media playlist keeps its live tags (no ENDLIST) and moves init and segments to ../c/; anything else is left out', () => {
    const playlist = [
      '#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-TARGETDURATION:2', '#EXT-X-MEDIA-SEQUENCE:20261122205312', '#EXT-X-INDEPENDENT-SEGMENTS',
      '#EXT-X-MAP:URI="init.mp4"', '#EXTINF:2.000000,', 'seg_main_20261122205312.m4s', '#EXTINF:2.000000,', '/etc/passwd', '#EXTINF:2.000000,', 'seg_main_20261122205313.m4s', '',
    ].join('\n');
    assert.equal(
      liveVariantOf(playlist),
      [
        '#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-TARGETDURATION:2', '#EXT-X-MEDIA-SEQUENCE:20261122205312', '#EXT-X-INDEPENDENT-SEGMENTS',
        '#EXT-X-MAP:URI="../c/init.mp4"', '#EXTINF:2.000000,', '../c/seg_main_20261122205312.m4s', '#EXTINF:2.000000,', '../c/seg_main_20261122205313.m4s', '',
      ].join('\n'),
    );
  });

  test('a session fetches only init and media segments of the window', () => {
    assert.equal(liveFileKind('init.mp4'), 'init');
    assert.equal(liveFileKind('seg_720p_20261122205312.m4s'), 'segment');
    for (const bad of ['index.m3u8', '.slicer-process.json', '../x.m4s', 'a/b.m4s', 'media_main.m3u8.tmp']) assert.equal(liveFileKind(bad), undefined, bad);
  });
});
