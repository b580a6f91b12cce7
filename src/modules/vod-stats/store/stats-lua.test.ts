import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FIRST_START_GRACE_S, RETENTION_MS, WINDOW_S } from '../stats-window.js';
import { LUA_CONSTANTS, statsLuaSource } from './stats-lua.js';

test('each number shared with TypeScript is declared once in the Lua script, with the TypeScript value', () => {
  const source = statsLuaSource();
  for (const [name, value] of Object.entries(LUA_CONSTANTS)) {
    const declarations = source.match(new RegExp(`^local ${name} = (.*)$`, 'gm')) ?? [];
    assert.deepEqual(declarations, [`local ${name} = ${value}`], `${name} declared once, by stats-lua.ts`);
  }
  assert.deepEqual(
    [LUA_CONSTANTS.WINDOW, LUA_CONSTANTS.RETENTION, LUA_CONSTANTS.GRACE],
    [WINDOW_S, RETENTION_MS, FIRST_START_GRACE_S],
  );
  assert.match(source, /^return redis\.error_reply\('unknown statistics script mode '/m, 'the three .lua files, last part included');
});
