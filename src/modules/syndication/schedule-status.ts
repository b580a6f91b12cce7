import type { TargetStatus } from './syndication.schema.js';

/**
 * Publishing schedule states and the target status they imply (spec "States and transitions";
 * DESIGN §5). A schedule is `stopped` when created; `start` and `stop` are the client's
 * actions; `fail` is what publishing reports when it breaks, `recover` what it reports when a
 * retry of its own got the stream accepted again.
 *
 *   stopped --start--> active --stop--> stopped
 *   active  --fail---> error  --start--> active (retry) | --recover--> active | --stop--> stopped
 *
 * Repeating the action a schedule is already in (start an active one, stop a stopped one)
 * changes nothing and is not an error, so clients can retry safely.
 */
export type ScheduleStatus = TargetStatus;
export type ScheduleAction = 'start' | 'stop';
export type ScheduleEvent = ScheduleAction | 'fail' | 'recover';

export type ScheduleTransition =
  | { ok: true; status: ScheduleStatus; changed: boolean }
  | { ok: false; reason: string };

const transitions: Record<ScheduleStatus, Partial<Record<ScheduleEvent, ScheduleStatus>>> = {
  stopped: { start: 'active', stop: 'stopped' },
  active: { start: 'active', stop: 'stopped', fail: 'error', recover: 'active' },
  error: { start: 'active', stop: 'stopped', fail: 'error', recover: 'active' },
};

export function scheduleTransition(current: ScheduleStatus, event: ScheduleEvent): ScheduleTransition {
  const next = transitions[current][event];
  if (next === undefined) return { ok: false, reason: `a ${current} schedule cannot ${event}` };
  return { ok: true, status: next, changed: next !== current };
}

/** How many of a target's schedules are in each state that matters for its status. */
export interface ScheduleCounts {
  active: number;
  error: number;
}

/** The target's status: error if any of its schedules is in error, else active if any is active, else stopped. */
export function targetStatusOf(counts: ScheduleCounts): TargetStatus {
  if (counts.error > 0) return 'error';
  return counts.active > 0 ? 'active' : 'stopped';
}

export function countSchedules(schedules: Iterable<ScheduleStatus>): ScheduleCounts {
  const counts = { active: 0, error: 0 };
  for (const status of schedules) if (status === 'active' || status === 'error') counts[status] += 1;
  return counts;
}

export const deriveTargetStatus = (schedules: Iterable<ScheduleStatus>): TargetStatus => targetStatusOf(countSchedules(schedules));

/** A target may be deleted only while no schedule using it is active. */
export function targetInUse(schedules: Iterable<ScheduleStatus>): boolean {
  for (const status of schedules) if (status === 'active') return true;
  return false;
}
