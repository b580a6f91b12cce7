import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedPackage } from '../helpers/built-package.js';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const run = (command: string, args: string[], cwd?: string) => {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' }, timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
};

// npm installs every bin as a symlink (node_modules/.bin, npm link, a global install): the CLI
// must run however it is reached, and say something.
describe('the built CLI, however it is installed', () => {
  // The package the other CLI tests run (built once per run, shared: only read here).
  const pkg = { dir: '' };
  let links: string;
  before(async () => {
    pkg.dir = await sharedPackage();
    links = mkdtempSync(join(tmpdir(), 'playline-links-'));
  });
  after(() => {
    rmSync(links, { recursive: true, force: true });
  });

  test('a direct path: node dist/cli/main.js and the executable dist/cli/bin.js', () => {
    assert.deepEqual(run(process.execPath, [join(pkg.dir, 'dist/cli/main.js'), '--version']).stdout.trim(), version);
    assert.deepEqual(run(join(pkg.dir, 'dist/cli/bin.js'), ['--version']).stdout.trim(), version);
  });

  test('through a symlink, as npm link and a global install reach it', () => {
    symlinkSync(join(pkg.dir, 'dist/cli/bin.js'), join(links, 'playline'));
    symlinkSync(join(pkg.dir, 'dist/cli/main.js'), join(links, 'playline-main'));
    const viaBin = run(join(links, 'playline'), ['--version']);
    assert.deepEqual({ status: viaBin.status, stdout: viaBin.stdout.trim() }, { status: 0, stdout: version });
    // The module itself, reached through a link (older installs pointed the bin at it).
    const viaMain = run(process.execPath, [join(links, 'playline-main'), '--version']);
    assert.deepEqual({ status: viaMain.status, stdout: viaMain.stdout.trim() }, { status: 0, stdout: version });
  });

  test('through npm exec (npx) in a package that depends on it by path', () => {
    const consumer = join(links, 'consumer');
    mkdirSync(join(consumer, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, dependencies: { playline: `file:${pkg.dir}` } }));
    // What `npm install <dir>` lays out: the package linked by name, its bin linked in .bin.
    symlinkSync(pkg.dir, join(consumer, 'node_modules', 'playline'), 'dir');
    symlinkSync('../playline/dist/cli/bin.js', join(consumer, 'node_modules', '.bin', 'playline'));
    const help = run('npm', ['exec', '--offline', '--', 'playline', '--help'], consumer);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^Usage: playline /);
    assert.match(help.stdout, /workspaces/);
  });

  test('a reader that closes the pipe early ends it quietly (no EPIPE crash)', () => {
    for (const program of [`"${join(pkg.dir, 'dist/cli/bin.js')}"`, `"${process.execPath}" "${join(pkg.dir, 'dist/cli/main.js')}"`]) {
      for (const reader of ['head -1', 'true']) {
        const result = run('bash', ['-c', `${program} --help | ${reader}; exit "\${PIPESTATUS[0]}"`]);
        assert.deepEqual({ program, reader, status: result.status, stderr: result.stderr }, { program, reader, status: 0, stderr: '' });
        if (reader === 'head -1') assert.match(result.stdout, /^Usage: playline /);
      }
    }
  });
});
