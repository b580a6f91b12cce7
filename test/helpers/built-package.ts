import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface BuiltPackage {
  /** The package directory: package.json, dist/ and node_modules (a link to the project's). */
  dir: string;
  remove(): void;
}

/**
 * The project as npm would install it: `dist/` laid out file for file as `npm run build` lays it
 * out (each module transpiled on its own, the Lua scripts beside), the package.json, and the
 * dependencies. esbuild transpiles in about a second where tsc needs most of a minute; the type
 * check is `npm run typecheck`'s job.
 */
export async function buildPackage(): Promise<BuiltPackage> {
  const dir = mkdtempSync(join(tmpdir(), 'playline-pkg-'));
  const sources = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' });
  const entryPoints = sources
    .filter((p) => p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.endsWith('.test-support.ts') && !p.endsWith('.d.ts') && !p.startsWith('dashboard'))
    .map((p) => join(root, 'src', p));
  await build({ entryPoints, outdir: join(dir, 'dist'), outbase: join(root, 'src'), format: 'esm', platform: 'node', target: 'node20', logLevel: 'error' });
  for (const p of sources.filter((s) => s.endsWith('.lua'))) {
    mkdirSync(dirname(join(dir, 'dist', p)), { recursive: true });
    copyFileSync(join(root, 'src', p), join(dir, 'dist', p));
  }
  chmodSync(join(dir, 'dist', 'cli', 'bin.js'), 0o755);
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
