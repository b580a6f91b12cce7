import { AppError } from '../../platform/errors.js';
import type { SlicerState, TaskOperation, TaskState } from './managed-slicers.schema.js';

/**
 * The slicer task state machine: PENDING -> IN_PROGRESS -> COMPLETED | FAILED, nothing else.
 * A task whose lease is taken over after a crash stays IN_PROGRESS (a change of owner, not of
 * state), so resuming it needs no extra transition.
 */
const nextStates: Record<TaskState, readonly TaskState[]> = {
  PENDING: ['IN_PROGRESS'],
  IN_PROGRESS: ['COMPLETED', 'FAILED'],
  COMPLETED: [],
  FAILED: [],
};

export type TerminalTaskState = 'COMPLETED' | 'FAILED';

export const canTransition = (from: TaskState, to: TaskState): boolean => nextStates[from].includes(to);

export const isTerminal = (state: TaskState): state is TerminalTaskState => nextStates[state].length === 0;

/** Throws `task_transition_not_allowed` unless `from -> to` is an edge of the state machine. */
export function assertTaskTransition(from: TaskState, to: TaskState): void {
  if (!canTransition(from, to)) {
    throw new AppError('task_transition_not_allowed', `A slicer task cannot go from ${from} to ${to}`);
  }
}

const busyState: Record<TaskOperation, SlicerState> = {
  CREATE: 'provisioning',
  UPDATE: 'updating',
  RESTART: 'restarting',
  DELETE: 'deleting',
};

/** The facts about a slicer's tasks that its state depends on. */
export interface SlicerTaskSummary {
  /** Operation of the oldest task that is not finished (the one running or next to run). */
  headOpen?: TaskOperation | undefined;
  /** Operation and state of the most recently finished task. */
  lastFinished?: { operation: TaskOperation; state: TaskState } | undefined;
}

/**
 * The slicer's state follows its tasks: while a task is open, the state names the work at the
 * head of the slicer's queue; once the queue is empty, it tells how the last task ended.
 * A failure of any operation leaves the slicer `failed` (its real state is unknown) until a
 * later task (typically RESTART, UPDATE or DELETE) succeeds.
 */
export function deriveSlicerState(summary: SlicerTaskSummary): SlicerState {
  if (summary.headOpen) return busyState[summary.headOpen];
  const last = summary.lastFinished;
  if (!last) return 'provisioning';
  if (!isTerminal(last.state)) throw new Error(`lastFinished task is ${last.state}, not finished`);
  if (last.state === 'FAILED') return 'failed';
  return last.operation === 'DELETE' ? 'deleted' : 'running';
}
