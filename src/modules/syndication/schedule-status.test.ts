import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveTargetStatus, scheduleTransition, targetInUse, type ScheduleStatus } from './schedule-status.js';

test('target status derivation: error wins, then active, else stopped', () => {
  const cases: [ScheduleStatus[], ScheduleStatus][] = [
    [[], 'stopped'],
    [['stopped'], 'stopped'],
    [['stopped', 'stopped'], 'stopped'],
    [['active'], 'active'],
    [['stopped', 'active'], 'active'],
    [['error'], 'error'],
    [['active', 'error', 'stopped'], 'error'],
    [['error', 'active'], 'error'],
  ];
  for (const [schedules, expected] of cases) assert.equal(deriveTargetStatus(schedules), expected, schedules.join(','));
});

test('schedule transitions', () => {
  const cases: [ScheduleStatus, 'start' | 'stop' | 'fail' | 'recover', ScheduleStatus | null, boolean][] = [
    ['stopped', 'recover', null, false],
    ['active', 'recover', 'active', false],
    ['error', 'recover', 'active', true],
    ['stopped', 'start', 'active', true],
    ['stopped', 'stop', 'stopped', false],
    ['stopped', 'fail', null, false],
    ['active', 'start', 'active', false],
    ['active', 'stop', 'stopped', true],
    ['active', 'fail', 'error', true],
    ['error', 'start', 'active', true],
    ['error', 'stop', 'stopped', true],
    ['error', 'fail', 'error', false],
  ];
  for (const [from, event, to, changed] of cases) {
    const result = scheduleTransition(from, event);
    if (to === null) assert.equal(result.ok, false, `${from} ${event}`);
    else assert.deepEqual(result, { ok: true, status: to, changed }, `${from} ${event}`);
  }
});

test('a target is in use only while a schedule is active', () => {
  assert.equal(targetInUse([]), false);
  assert.equal(targetInUse(['stopped', 'error']), false);
  assert.equal(targetInUse(['stopped', 'active']), true);
});
