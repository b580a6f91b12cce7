import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accelUriOf, type MediaAccel } from './session.routes.js';

const accel: MediaAccel = { prefix: '/_playline_media/', root: '/srv/media' };

test('X-Accel-Redirect names a plain path below the media root', () => {
  assert.equal(accelUriOf(accel, '/srv/media/assets/o/a', '1080p/seg_00001.m4s'), '/_playline_media/assets/o/a/1080p/seg_00001.m4s');
  assert.equal(accelUriOf(accel, '/srv/media/live/o/s', 'init_0.mp4'), '/_playline_media/live/o/s/init_0.mp4');
});

test('abuse: a path that leaves the media root, a dotfile, or a character nginx would read differently is never redirected', () => {
  for (const [dir, file] of [
    ['/srv/media/assets/o/a', '../../../../etc/passwd'],
    ['/srv/media/assets/o/a', '../b/1080p/seg_00001.m4s'],
    ['/srv/media-other/assets/o/a', 'seg.m4s'],
    ['/srv', 'media/../secret.key'],
    ['/srv/media/assets/o/a', '.manifest.json.tmp'],
    ['/srv/media/assets/o/a', '1080p/.hidden.m4s'],
    ['/srv/media/assets/o/a', 'seg%2e%2e.m4s'],
    ['/srv/media/assets/o/a', 'seg.m4s?x=1'],
    ['/srv/media/assets/o/a', 'seg 1.m4s'],
    ['/srv/media/assets/o/a', '1080p//seg.m4s'],
  ]) {
    assert.equal(accelUriOf(accel, dir as string, file as string), undefined, `${dir} ${file}`);
  }
});
