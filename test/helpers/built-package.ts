import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, version as esbuildVersion } from 'esbuild';
import { BUILD_MANIFEST } from '../../src/modules/dashboard/dashboard-assets.js';
import { bundleDashboard } from '../../src/modules/dashboard/dashboard-bundle.js';
import { sharedArtifact } from './shared-cache.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The src/ files a build reads, relative to src/: modules to transpile, Lua scripts to copy, the dashboard to bundle. */
const buildInputs = (): { modules: string[]; assets: string[]; dashboard: string[] } => {
  const sources = readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(join(root, 'src'), join(entry.parentPath, entry.name)))
    .sort();
  return {
    modules: sources.filter((p) => p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.endsWith('.test-support.ts') && !p.endsWith('.d.ts') && !p.startsWith('dashboard')),
    assets: sources.filter((p) => p.endsWith('.lua')),
    dashboard: sources.filter((p) => p.startsWith('dashboard/')),
  };
};

/**
 * The project as npm would install it, into `dir`: `dist/` laid out as `npm run build` lays it
 * out (each module transpiled on its own, the Lua scripts beside, the dashboard bundled into
 * dist/dashboard with its build.json), the package.json, and the dependencies. esbuild transpiles
 * in about a second where tsc needs most of a minute; the type check is `npm run typecheck`'s job.
 */
async function buildInto(dir: string): Promise<void> {
  const { modules, assets } = buildInputs();
  await build({ entryPoints: modules.map((p) => join(root, 'src', p)), outdir: join(dir, 'dist'), outbase: join(root, 'src'), format: 'esm', platform: 'node', target: 'node20', logLevel: 'error' });
  for (const p of assets) {
    mkdirSync(dirname(join(dir, 'dist', p)), { recursive: true });
    copyFileSync(join(root, 'src', p), join(dir, 'dist', p));
  }
  const dashboard = await bundleDashboard(join(root, 'src', 'dashboard'));
  for (const file of dashboard.files) {
    mkdirSync(dirname(join(dir, 'dist', 'dashboard', file.name)), { recursive: true });
    writeFileSync(join(dir, 'dist', 'dashboard', file.name), file.contents);
  }
  writeFileSync(join(dir, 'dist', 'dashboard', BUILD_MANIFEST), `${JSON.stringify({ files: dashboard.files.map((f) => f.name) }, null, 2)}\n`);
  chmodSync(join(dir, 'dist', 'cli', 'bin.js'), 0o755);
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
}

let shared: Promise<string> | undefined;

/**
 * The package built from the sources as they are now (its directory: package.json, dist/,
 * node_modules linked to the project's), shared by every test file and process of the machine:
 * built once per change of what a build reads, in about a second (shared-cache.ts). Read it,
 * never change it. Keyed by those files, the checkout (its node_modules is linked) and esbuild's version.
 */
export function sharedPackage(): Promise<string> {
  shared ??= (() => {
    const { modules, assets, dashboard } = buildInputs();
    const hash = createHash('sha256');
    for (const p of [...modules, ...assets, ...dashboard]) hash.update(`${p}\0`).update(readFileSync(join(root, 'src', p))).update('\0');
    hash.update(readFileSync(join(root, 'package.json')));
    return sharedArtifact('package', JSON.stringify({ root, esbuild: esbuildVersion, sources: hash.digest('hex') }), buildInto);
  })();
  return shared;
}

/** The built `playline` executable in the shared package (`dist/cli/bin.js`: run it with node, or directly). */
export const sharedPlaylineBin = async (): Promise<string> => join(await sharedPackage(), 'dist', 'cli', 'bin.js');
