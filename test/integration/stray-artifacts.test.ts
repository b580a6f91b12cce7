import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { openSync, readSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Media and test scratch files by extension (`.ts` is decided by content: TypeScript or MPEG-TS). */
const MEDIA = /\.(m3u8|m3u|mpd|mp4|m4s|m4a|m4v|mov|mkv|webm|flv|aac|mp3|ts|cmfv|cmfa|vtt|ismv|y4m|yuv|wav)$/i;

/** An MPEG transport stream: sync byte 0x47 at 0 and at the next 188-byte packet. */
const isTransportStream = (path: string): boolean => {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(189);
    const n = readSync(fd, buf, 0, 189, 0);
    return n === 189 && buf[0] === 0x47 && buf[188] === 0x47;
  } finally {
    closeSync(fd);
  }
};

/** What `git ls-files` tracks that is a media or test artifact outside test/fixtures/. */
export function strayArtifacts(files: string[], readable: (path: string) => boolean): string[] {
  return files.filter((file) => {
    if (file.startsWith('test/fixtures/') || !MEDIA.test(file)) return false;
    return !file.toLowerCase().endsWith('.ts') || readable(file);
  });
}

test('no media or test artifact is tracked outside test/fixtures (issue 36: a stray SSRF playlist p.m3u8 sat at the root)', () => {
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter((f) => f !== '');
  assert.ok(tracked.length > 100 && tracked.includes('package.json'), 'git ls-files lists the repository');
  const stray = strayArtifacts(tracked, (file) => isTransportStream(join(root, file)));
  assert.deepEqual(stray, [], `move these under test/fixtures/ or delete them (and keep scratch media out with .gitignore): ${stray.join(', ')}`);
});

test('the check itself: a playlist or segment anywhere else is caught, TypeScript is not, fixtures are allowed', () => {
  const files = ['p.m3u8', 'src/a.ts', 'src/seg00001.ts', 'docs/x.mp4', 'test/fixtures/clip.mp4', 'scratch/init.m4s'];
  assert.deepEqual(strayArtifacts(files, (f) => f === 'src/seg00001.ts'), ['p.m3u8', 'src/seg00001.ts', 'docs/x.mp4', 'scratch/init.m4s']);
});
