import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * What `npm run build` ships, checked from the build configuration without building: the files
 * tsc compiles into dist (tsconfig.build.json's list plus everything they import), the assets
 * copied beside them and the dashboard sources. Nothing of the tests may be among them.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const rel = (path: string) => relative(root, path).split('\\').join('/');

/** The source files tsc emits into dist for tsconfig.build.json. */
function buildFiles(configPath = join(root, 'tsconfig.build.json')): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(String(d.messageText)) });
  assert.ok(parsed, 'tsconfig.build.json parses');
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
  return program
    .getSourceFiles()
    .map((file) => file.fileName)
    .filter((name) => !name.includes('/node_modules/') && !name.endsWith('.d.ts'))
    .map(rel)
    .sort();
}

const TEST_SUPPORT = /(\.test\.ts|\.test-support\.ts)$|(^|\/)testing\/|^test\//;
const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;
const NODE_TEST = /from\s+['"](node:)?test['"]|import\(\s*['"](node:)?test['"]\s*\)|require\(\s*['"](node:)?test['"]\s*\)/;

const shipped = buildFiles();

test('the build compiles the server, the CLI and the SDK, and no test, test support or test helper', () => {
  for (const entry of ['src/cli/main.ts', 'src/client/index.ts', 'src/server.ts']) assert.ok(shipped.includes(entry), `${entry} is built`);
  const tests = shipped.filter((path) => TEST_SUPPORT.test(path));
  assert.deepEqual(tests, [], 'test code in dist (rename it *.test-support.ts, or keep it under a testing/ folder, and never import it from production code)');
});

test('no file of the build imports node:test', () => {
  const importing = shipped.filter((path) => NODE_TEST.test(readFileSync(join(root, path), 'utf8')));
  assert.deepEqual(importing, []);
});

test('no file of the build, no copied asset and no dashboard source holds a private key', () => {
  const candidates = [
    ...shipped,
    ...readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
      .map((path) => `src/${path.split('\\').join('/')}`)
      .filter((path) => !TEST_SUPPORT.test(path) && /\.(lua|ts|html|css|json)$/.test(path)),
  ];
  const holding = [...new Set(candidates)].filter((path) => PRIVATE_KEY.test(readFileSync(join(root, path), 'utf8')));
  assert.deepEqual(holding, []);
});

test('package.json points at files the build emits: the SDK entry (exports, main, types) and the CLI', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    main: string;
    types: string;
    bin: Record<string, string>;
    exports: Record<string, { types: string; import: string } | string>;
  };
  const source = (dist: string) => dist.replace(/^\.\//, '').replace(/^dist\//, 'src/').replace(/\.d\.ts$|\.js$/, '.ts');
  const sdk = pkg.exports['.'];
  assert.ok(sdk && typeof sdk === 'object', 'exports["."] names the SDK');
  for (const path of [sdk.import, sdk.types, pkg.main, pkg.types, ...Object.values(pkg.bin)]) {
    assert.ok(shipped.includes(source(path)), `${path} is emitted (from ${source(path)})`);
  }
  assert.equal(source(sdk.import), 'src/client/index.ts');
});

test('the check itself notices a test-support import and a private key', () => {
  assert.ok(TEST_SUPPORT.test('src/modules/x/y.test-support.ts') && TEST_SUPPORT.test('src/modules/x/testing/kit.ts'));
  assert.ok(NODE_TEST.test("import { test } from 'node:test';") && NODE_TEST.test("import('node:test')"));
  assert.ok(PRIVATE_KEY.test(readFileSync(join(root, 'test/fixtures/rtmps-localhost.key.pem'), 'utf8')));
});
