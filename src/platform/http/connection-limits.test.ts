import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../logger.js';
import { connectionCaps } from './connection-limits.js';

const capture = () => {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  return { lines, log };
};

const settings = { maxConnectionsPerAddress: 256, fdReserve: 512 };
const limitOf = (limit: number) => () => ({ limit, source: '/proc/self/limits' });
const warnings = (lines: Array<Record<string, unknown>>) => lines.filter((l) => l.level === 40).map((l) => String(l.msg));

test('the instance cap defaults to what the open-file limit allows, and says so at start', () => {
  const { lines, log } = capture();
  assert.deepEqual(connectionCaps(settings, log, limitOf(65536)), { cap: 32512, perNetwork: 256 });
  assert.deepEqual(lines.map((l) => [l.level, l.msg, l.maxConnections, l.maxConnectionsPerNetwork, l.openFileLimit]), [[30, 'connection caps', 32512, 256, 65536]]);
});

test('a cap above what the open-file limit allows is lowered to it, with a warning naming the setting', () => {
  const { lines, log } = capture();
  assert.deepEqual(connectionCaps({ ...settings, maxConnections: 5000 }, log, limitOf(4096)), { cap: 1792, perNetwork: 256 });
  assert.deepEqual(warnings(lines).length, 1);
  assert.match(warnings(lines)[0] ?? '', /PLAYLINE_MAX_CONNECTIONS \(--max-connections\) is 5000.*lowered to 1792/);
});

test('one client network gets at most a quarter of the instance cap (warned), so it cannot take every connection; 0 stays no cap', () => {
  const { lines, log } = capture();
  // ulimit -n 1024, the review's N13 set-up: 256 connections, one /24 at most 64 of them.
  assert.deepEqual(connectionCaps(settings, log, limitOf(1024)), { cap: 256, perNetwork: 64 });
  assert.match(warnings(lines)[0] ?? '', /PLAYLINE_MAX_CONNECTIONS_PER_ADDRESS \(--max-connections-per-address\) is 256.*lowered to 64/);
  assert.deepEqual(connectionCaps({ ...settings, maxConnections: 2 }, capture().log, limitOf(1024)), { cap: 2, perNetwork: 1 });
  const proxied = capture();
  assert.deepEqual(connectionCaps({ ...settings, maxConnectionsPerAddress: 0 }, proxied.log, limitOf(1024)), { cap: 256, perNetwork: 0 });
  assert.deepEqual(warnings(proxied.lines), []);
});
