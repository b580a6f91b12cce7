import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newKeySecret } from './workspaces.service.js';

test("an API key's secret never starts with '-' (a command line would read it as an option), and is 40 URL-safe characters", () => {
  // One secret in 64 started with '-' before: among 3,000, a dozen or more would.
  const secrets = Array.from({ length: 3000 }, () => newKeySecret());
  assert.equal(secrets.filter((s) => s.startsWith('-')).length, 0);
  assert.ok(secrets.every((s) => /^[A-Za-z0-9_-]{40}$/.test(s)));
  assert.equal(new Set(secrets).size, secrets.length);
});
