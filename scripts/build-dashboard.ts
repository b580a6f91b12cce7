/**
 * `npm run build` step: bundles the browser dashboard (src/dashboard) into dist/dashboard
 * (or the directory given as the first argument), with build.json listing the files. The
 * built server serves exactly these files at /dashboard.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_MANIFEST } from '../src/modules/dashboard/dashboard-assets.js';
import { bundleDashboard } from '../src/modules/dashboard/dashboard-bundle.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const outDir = resolve(root, process.argv[2] ?? 'dist/dashboard');

const bundle = await bundleDashboard(join(root, 'src/dashboard'));
await rm(outDir, { recursive: true, force: true });
for (const file of bundle.files) {
  const path = join(outDir, file.name);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, file.contents);
}
const names = bundle.files.map((f) => f.name);
await writeFile(join(outDir, BUILD_MANIFEST), `${JSON.stringify({ files: names }, null, 2)}\n`);
for (const file of bundle.files) process.stdout.write(`${relative(root, join(outDir, file.name))}  ${(file.contents.length / 1024).toFixed(1)} KiB\n`);
