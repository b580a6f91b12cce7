/**
 * `npm run build` step: copies the files the compiled server reads at run time beside its
 * modules (the Lua scripts of the Redis statistics store) from src/ into dist/, same paths,
 * and makes the `playline` executable executable (npm does it on install; a direct path needs it).
 */
import { chmodSync, copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const ASSETS = /\.lua$/;

const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter((path) => ASSETS.test(path));
for (const path of files) {
  const target = join(root, 'dist', path);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(join(root, 'src', path), target);
  process.stdout.write(`dist/${path}\n`);
}
chmodSync(join(root, 'dist', 'cli', 'bin.js'), 0o755);
