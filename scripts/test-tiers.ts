import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `npm run test:unit`: every test file, run tier by tier (unit, integration, media, e2e), each tier
 * with node's runner at --test-concurrency=3, then the wall time of each tier and of the whole run
 * printed at the end. The tiers run one after another so each time is the tier's own: a CI record
 * of these tells whether the suite holds the 9-minute bar, and which tier moved when it does not.
 * Any tier failing fails the run (every tier still runs, so one failure hides no other).
 *
 * Tiers, by path: test/e2e/ is e2e, test/integration/ is integration, *.media.test.ts is media,
 * everything else is unit. `TEST_TIERS=unit,media` runs only those.
 */
const root = new URL('../', import.meta.url).pathname;
const files = ['src', 'test']
  .flatMap((dir) => readdirSync(join(root, dir), { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.test.ts')).map((e) => join(e.parentPath, e.name).slice(root.length)))
  .sort();

const tierOf = (file: string): string =>
  file.startsWith('test/e2e/') ? 'e2e' : file.startsWith('test/integration/') ? 'integration' : file.endsWith('.media.test.ts') ? 'media' : 'unit';
const tiers = ['unit', 'integration', 'media', 'e2e'];
const wanted = process.env.TEST_TIERS ? process.env.TEST_TIERS.split(',') : tiers;

const run = (tierFiles: string[]): Promise<number> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=3', ...tierFiles], { cwd: root, stdio: 'inherit' });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const results: Array<{ tier: string; files: number; ms: number; code: number }> = [];
const started = Date.now();
for (const tier of tiers.filter((t) => wanted.includes(t))) {
  const tierFiles = files.filter((file) => tierOf(file) === tier);
  if (tierFiles.length === 0) continue;
  const begun = Date.now();
  const code = await run(tierFiles);
  results.push({ tier, files: tierFiles.length, ms: Date.now() - begun, code });
}
console.log('\n# wall time per tier');
for (const r of results) console.log(`#   ${r.tier.padEnd(12)} ${String(r.files).padStart(4)} files  ${seconds(r.ms).padStart(9)}  ${r.code === 0 ? 'pass' : `FAIL (exit ${r.code})`}`);
console.log(`#   ${'all'.padEnd(12)} ${String(files.length).padStart(4)} files  ${seconds(Date.now() - started).padStart(9)}`);
process.exitCode = results.some((r) => r.code !== 0) ? 1 : 0;
