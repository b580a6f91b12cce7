import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, settings } from './config.js';

test('defaults apply when nothing is set', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.timestampToleranceS, 300);
  assert.equal(config.databaseUrl, undefined);
});

test('environment values are converted and flags override them', () => {
  const config = loadConfig({ PLAYLINE_PORT: '9000', PLAYLINE_LOG_LEVEL: 'warn' }, { port: '9100' });
  assert.equal(config.port, 9100);
  assert.equal(config.logLevel, 'warn');
});

test('a bad value names the setting, its variable and its flag', () => {
  assert.throws(() => loadConfig({ PLAYLINE_PORT: 'abc' }), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.match(err.message, /PLAYLINE_PORT \(--port\)/);
    assert.match(err.message, /"abc"/);
    return true;
  });
  assert.throws(() => loadConfig({ PLAYLINE_DATABASE_URL: 'mysql://x' }), /PLAYLINE_DATABASE_URL/);
  assert.throws(() => loadConfig({ PLAYLINE_LOG_LEVEL: 'loud' }), /PLAYLINE_LOG_LEVEL/);
});

test('secret settings are never echoed in errors', () => {
  assert.throws(() => loadConfig({ PLAYLINE_ADMIN_TOKEN: 'short-secret' }), (err: unknown) => {
    assert.ok(err instanceof Error);
    assert.doesNotMatch(err.message, /short-secret/);
    assert.match(err.message, /PLAYLINE_ADMIN_TOKEN/);
    return true;
  });
});

test('every setting has a variable, a flag and a description', () => {
  for (const s of settings) {
    assert.match(s.env, /^PLAYLINE_[A-Z0-9_]+$/);
    assert.match(s.flag, /^--[a-z-]+$/);
    assert.ok(s.description.length > 10);
  }
});

test('the outbound allow-list covers callbacks and publishing; its former name is still read and joins it', () => {
  assert.equal(loadConfig({ PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' }).outboundAllowlist, '127.0.0.1/32');
  const former = loadConfig({ PLAYLINE_CALLBACK_ALLOWLIST: '10.0.0.0/8' });
  assert.equal(former.outboundAllowlist, '10.0.0.0/8');
  assert.equal(former.callbackAllowlist, '10.0.0.0/8', 'kept, so the start can warn that it is deprecated');
  assert.equal(loadConfig({ PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_CALLBACK_ALLOWLIST: '10.0.0.0/8' }).outboundAllowlist, '127.0.0.1/32,10.0.0.0/8');
});
