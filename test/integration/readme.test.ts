import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { settings } from '../../src/platform/config.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

test('the README configuration table lists every setting with its flag', () => {
  for (const s of settings) assert.match(readme, new RegExp(`\\| \`${s.env}\` \\| \`${s.flag}\` \\|`), `${s.env} missing from README`);
});

test('the README keeps the two commands', () => {
  assert.match(readme, /npm install && npm start/);
  assert.match(readme, /npm test/);
});
