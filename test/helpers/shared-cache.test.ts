import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const helper = fileURLToPath(new URL('./shared-cache.ts', import.meta.url));

/**
 * Two test processes making the same entry at once (what two test files do with the built
 * package): both make it, one rename wins, and both end with the same whole entry. Each maker
 * waits until the other has started, so the two makings overlap every time.
 */
test('two processes making one entry at once both get the one that was renamed into place, and leave no temporary directory', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'playline-shared-cache-test-'));
  try {
    const script = `
      import { existsSync, writeFileSync } from 'node:fs';
      import { join } from 'node:path';
      import { sharedArtifact } from ${JSON.stringify(helper)};
      const barrier = (who) => join(process.env.TMPDIR, 'started-' + who);
      const dir = await sharedArtifact('race', 'one recipe', async (into) => {
        writeFileSync(barrier(process.argv[1]), '');
        while (!existsSync(barrier(process.argv[1] === 'a' ? 'b' : 'a'))) await new Promise((resolve) => setTimeout(resolve, 5));
        writeFileSync(join(into, 'made-by'), process.argv[1]);
      });
      process.stdout.write(dir);
    `;
    const maker = (who: string) => run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, who], { env: { ...process.env, TMPDIR: tmp } });
    const [a, b] = await Promise.all([maker('a'), maker('b')]);
    assert.equal(a.stdout, b.stdout, 'the same entry for both');
    assert.match(readFileSync(join(a.stdout, 'made-by'), 'utf8'), /^[ab]$/);
    assert.deepEqual(readdirSync(join(tmp, 'playline-test-cache', 'race')), [a.stdout.split('/').at(-1)], 'only the entry: the losing copy is removed');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
