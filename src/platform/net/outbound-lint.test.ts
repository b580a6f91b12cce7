import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
// @ts-expect-error The lint configuration is plain JavaScript without declarations.
import { outboundRestrictions } from '../../../eslint.config.js';

/**
 * Acceptance 3 of issue 42: no connection out of the process except through the outbound layer.
 * The lint blocks of eslint.config.js (the ones `npm test` runs) are tried here on attempts to
 * connect directly, and on the whole tree.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  overrideConfig: [
    { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser }, plugins: { '@typescript-eslint': tseslint.plugin as unknown as ESLint.Plugin } },
    ...(outboundRestrictions as Linter.Config[]),
  ],
});
const problems = async (code: string, filePath = 'src/modules/example/example.ts'): Promise<string[]> => {
  const [result] = await eslint.lintText(code, { filePath: join(root, filePath) });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
};

const attempts: Record<string, string> = {
  'net.connect': "import { connect } from 'node:net';\nconnect(80, '10.0.0.1');",
  'net namespace': "import * as net from 'node:net';\nnet.createConnection(80, '10.0.0.1');",
  'net without the node: prefix': "import { createConnection } from 'net';\ncreateConnection(80, '10.0.0.1');",
  'a new Socket': "import { Socket } from 'node:net';\nnew Socket().connect(80, '10.0.0.1');",
  'tls.connect': "import { connect } from 'node:tls';\nconnect(443, 'internal.example');",
  'http.request': "import { request } from 'node:http';\nrequest('http://169.254.169.254/latest/meta-data/').end();",
  'https.get': "import { get } from 'node:https';\nget('https://internal.example/');",
  'undici': "import { request } from 'undici';\nawait request('http://10.0.0.1/');",
  'undici Pool': "import { Pool } from 'undici';\nnew Pool('http://10.0.0.1');",
  'fetch': "await fetch('http://169.254.169.254/');",
  'globalThis.fetch': "await globalThis.fetch('http://169.254.169.254/');",
  'a UDP socket': "import { createSocket } from 'node:dgram';\ncreateSocket('udp4').send(Buffer.alloc(1), 9000, '10.0.0.1');",
  'a dynamic import': "const net = await import('node:net');\nnet.connect(80, '10.0.0.1');",
  'an ffmpeg rtmp URL with a computed host': "const host = 'a';\nexport const args = ['-f', 'flv', `rtmp://${host}:1935/live/key`];",
  'an ffmpeg srt URL with a computed host': "const host = 'a';\nexport const url = `srt://${host}:9000`;",
};

for (const [name, code] of Object.entries(attempts)) {
  test(`lint refuses a direct connection in a module: ${name}`, async () => {
    const found = await problems(code);
    assert.ok(found.length > 0, `no lint error for ${name}`);
    assert.ok(found.every((p) => /outbound/.test(p)), found.join('\n'));
  });
}

test('the outbound layer itself, tests and type-only imports are allowed', async () => {
  assert.deepEqual(await problems(attempts['net.connect'] ?? '', 'src/platform/net/outbound.ts'), []);
  assert.deepEqual(await problems(attempts['fetch'] ?? '', 'src/modules/example/example.test.ts'), []);
  assert.deepEqual(await problems("import type { Socket } from 'node:net';\nimport { createServer, type AddressInfo } from 'node:net';\nexport const s: Socket | AddressInfo | undefined = undefined;\ncreateServer();"), []);
  assert.deepEqual(await problems("export const url = `srt://127.0.0.1:${9000}`;"), [], 'a loopback URL with a computed port is not a destination');
});

test('a listed exception is relaxed only for what it needs', async () => {
  // The SRT relay binds its loopback side with dgram, but may not connect out over TCP.
  assert.deepEqual(await problems(attempts['a UDP socket'] ?? '', 'src/modules/syndication/udp-relay.ts'), []);
  assert.ok((await problems(attempts['net.connect'] ?? '', 'src/modules/syndication/udp-relay.ts')).length > 0);
  assert.ok((await problems(attempts['an ffmpeg srt URL with a computed host'] ?? '', 'src/modules/syndication/udp-relay.ts')).length > 0);
});

test('no file of the server opens a connection out except through the outbound layer', async () => {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) files.push(path);
    }
  };
  walk(join(root, 'src'));
  const results = await eslint.lintFiles(files);
  const found = results.flatMap((r) => r.messages.map((m) => `${relative(root, r.filePath)}:${m.line} ${m.message}`));
  assert.deepEqual(found, []);
});
