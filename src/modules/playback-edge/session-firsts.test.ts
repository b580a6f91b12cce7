import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionFirsts } from './session-firsts.js';

test('each first of a session is reported once, per workspace; the memory is bounded, least recently active forgotten first', () => {
  const firsts = new SessionFirsts(2);
  assert.equal(firsts.first('w1', 's1', 'manifest'), true);
  assert.equal(firsts.first('w1', 's1', 'manifest'), false);
  assert.equal(firsts.first('w1', 's1', 'start'), true, 'another mark of the same session');
  assert.equal(firsts.first('w2', 's1', 'manifest'), true, 'the same session id in another workspace');
  assert.equal(firsts.first('w1', 's1', 'ad'), true, 's1 of w1 is the most recent again');
  assert.equal(firsts.first('w1', 's2', 'manifest'), true);
  assert.equal(firsts.size, 2);
  assert.equal(firsts.first('w2', 's1', 'manifest'), true, 'forgotten (least recently active): reported again, and the statistics count it once');
  assert.equal(firsts.first('w1', 's2', 'manifest'), false);
});
