import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LATE_MINUTES, MINUTE_MS, RETENTION_MS, WINDOW_MINUTES } from '../stats-window.js';
import { LUA_CONSTANTS, statsLuaSource } from './stats-lua.js';

test('each number shared with TypeScript is declared once in the Lua script, with the TypeScript value', () => {
  const source = statsLuaSource();
  for (const [name, value] of Object.entries(LUA_CONSTANTS)) {
    const declarations = source.match(new RegExp(`^local ${name} = (.*)$`, 'gm')) ?? [];
    assert.deepEqual(declarations, [`local ${name} = ${value}`], `${name} declared once, by stats-lua.ts`);
  }
  assert.deepEqual(
    [LUA_CONSTANTS.WINDOW, LUA_CONSTANTS.RETENTION, LUA_CONSTANTS.MINUTE, LUA_CONSTANTS.LATE],
    [WINDOW_MINUTES, RETENTION_MS, MINUTE_MS, LATE_MINUTES],
  );
  assert.match(source, /^return redis\.error_reply\('unknown statistics script mode '/m, 'the three .lua files, last part included');
});
