import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../platform/errors.js';
import { taskOperations, taskStates, type TaskState } from './managed-slicers.schema.js';
import { assertTaskTransition, canTransition, deriveSlicerState, isTerminal } from './task-state.js';

const legal = new Set(['PENDING>IN_PROGRESS', 'IN_PROGRESS>COMPLETED', 'IN_PROGRESS>FAILED']);

test('only PENDING>IN_PROGRESS>COMPLETED|FAILED are allowed; every other pair throws a domain error', () => {
  for (const from of taskStates) {
    for (const to of taskStates) {
      const allowed = legal.has(`${from}>${to}`);
      assert.equal(canTransition(from, to), allowed, `${from} -> ${to}`);
      if (allowed) {
        assert.doesNotThrow(() => assertTaskTransition(from, to));
      } else {
        assert.throws(
          () => assertTaskTransition(from, to),
          (err: unknown) => err instanceof AppError && err.code === 'task_transition_not_allowed' && err.status === 409,
          `${from} -> ${to} must be refused`,
        );
      }
    }
  }
});

test('terminal states have no way out, and every walk through the machine ends in one of them', () => {
  assert.deepEqual(taskStates.filter(isTerminal), ['COMPLETED', 'FAILED']);
  // Try every sequence of 4 requested moves from PENDING; only legal ones are applied.
  const walk = (state: TaskState, depth: number, path: TaskState[]): void => {
    if (depth === 0) return;
    for (const to of taskStates) {
      try {
        assertTaskTransition(state, to);
      } catch {
        continue;
      }
      const next = [...path, to];
      assert.ok(
        ['PENDING,IN_PROGRESS', 'PENDING,IN_PROGRESS,COMPLETED', 'PENDING,IN_PROGRESS,FAILED'].includes(next.join(',')),
        `reachable path ${next.join(' -> ')}`,
      );
      walk(to, depth - 1, next);
    }
  };
  walk('PENDING', 4, ['PENDING']);
});

test('the slicer state names the work at the head of its queue', () => {
  assert.equal(deriveSlicerState({ headOpen: 'CREATE' }), 'provisioning');
  assert.equal(deriveSlicerState({ headOpen: 'UPDATE', lastFinished: { operation: 'CREATE', state: 'COMPLETED' } }), 'updating');
  assert.equal(deriveSlicerState({ headOpen: 'RESTART', lastFinished: { operation: 'CREATE', state: 'FAILED' } }), 'restarting');
  assert.equal(deriveSlicerState({ headOpen: 'DELETE' }), 'deleting');
});

test('with an empty queue the slicer state tells how the last task ended', () => {
  for (const operation of taskOperations) {
    assert.equal(deriveSlicerState({ lastFinished: { operation, state: 'FAILED' } }), 'failed');
    const expected = operation === 'DELETE' ? 'deleted' : 'running';
    assert.equal(deriveSlicerState({ lastFinished: { operation, state: 'COMPLETED' } }), expected);
  }
  assert.throws(() => deriveSlicerState({ lastFinished: { operation: 'CREATE', state: 'IN_PROGRESS' } }));
});
