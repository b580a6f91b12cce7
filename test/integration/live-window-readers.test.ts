import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Issue 42, acceptance 2: the live window has one writer and a typed contract (live.json,
 * `src/platform/media/live-window.ts`); no module outside the writer parses a live playlist.
 * Read from the sources: the writer's files are the only ones that write LL-HLS tags, and every
 * module that reads a live window (it names the window's folder or its contract) holds no playlist
 * text and no playlist parser. Fails on a reader that learns the window's state from playlist lines.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');

/** The window's writer and contract: the playlist text of live windows is made here, and only here. */
const WRITER = new Set(['src/platform/media/live-window.ts', 'src/platform/media/live-playlist.ts', 'src/platform/media/ll-hls-window.ts']);

/** LL-HLS tags: only a live window has them (packaged assets are plain HLS). */
const LL_TAGS = /#EXT-X-(PART|PART-INF|PRELOAD-HINT|SERVER-CONTROL|SKIP|RENDITION-REPORT)\b/;
/** What a module that reads a live window names to get at it. */
const READS_WINDOW = /\bliveDir\(|\b(livePlaylistPath|LIVE_INDEX_FILE|LiveLibrary|readLiveWindow)\b|live-window\.js|live-library\.js/;
/** Playlist text or a playlist parser. */
const PARSES_PLAYLISTS = /#EXT|hls-parser|parseMediaPlaylist|\.m3u8['"`], ['"]utf8/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.includes('.test-support.') ? [path] : [];
  });
}

/** Source files (relative to the repository) that break the rule, with why. */
function offenders(src: string): string[] {
  const found: string[] = [];
  for (const path of sources(src)) {
    const file = relative(join(src, '..'), path);
    if (WRITER.has(file)) continue;
    const text = readFileSync(path, 'utf8');
    if (LL_TAGS.test(text)) found.push(`${file}: writes or reads LL-HLS tags (only the window's writer does)`);
    else if (READS_WINDOW.test(text) && PARSES_PLAYLISTS.test(text)) found.push(`${file}: reads a live window and handles playlist text (read live.json through live-window.ts instead)`);
  }
  return found;
}

test('no module outside the live window\'s writer parses or writes live playlist text; readers go through the typed contract', () => {
  assert.deepEqual(offenders(SRC), []);
});

test('the rule sees what it is meant to see: the writer itself is caught when not allowed', () => {
  const writer = readFileSync(join(SRC, 'platform/media/live-playlist.ts'), 'utf8');
  assert.ok(LL_TAGS.test(writer), 'the renderer writes LL-HLS tags');
  const reader = readFileSync(join(SRC, 'modules/playback-edge/live-session.ts'), 'utf8');
  assert.ok(READS_WINDOW.test(reader), 'the edge\'s live session is seen as a reader of the window');
});
