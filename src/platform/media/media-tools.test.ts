import { test } from 'node:test';
import assert from 'node:assert/strict';
import { discoverMediaTools } from './media-tools.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';

test('finds ffmpeg and ffprobe in PATH and reads their versions', { skip: await mediaToolsSkip() }, async () => {
  const tools = await discoverMediaTools({ ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' });
  assert.equal(tools.available, true, JSON.stringify(tools));
  if (!tools.available) return;
  assert.match(tools.ffmpegVersion, /^\S+$/);
  assert.match(tools.ffprobeVersion, /^\S+$/);
});

test('a missing tool makes the tools unavailable with the install hint, naming what is missing', async () => {
  const tools = await discoverMediaTools({ ffmpeg: 'ffmpeg', ffprobe: '/nonexistent/ffprobe' });
  assert.equal(tools.available, false);
  if (tools.available) return;
  assert.match(tools.reason, /ffprobe not found \(\/nonexistent\/ffprobe\)/);
  assert.doesNotMatch(tools.reason, /ffmpeg not found/);
  assert.match(tools.reason, /apt-get install ffmpeg/);
  assert.match(tools.reason, /PLAYLINE_FFMPEG_PATH/);
});

test('an executable that is not the tool is reported as not running', async () => {
  const tools = await discoverMediaTools({ ffmpeg: '/bin/false', ffprobe: 'ffprobe' });
  assert.equal(tools.available, false);
  if (!tools.available) assert.match(tools.reason, /ffmpeg \(\/bin\/false\) does not run/);
});
