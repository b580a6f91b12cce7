import type { CallbackRequest } from '../../platform/outbound/delivery-client.js';
import { CircularBuffer } from './circular-buffer.js';
import type { DeliveryOutcome, DeliveryOutcomeKind, LoggedOutcomeKind } from '../../platform/outbound/delivery-outcome.js';
import { isUnreachable } from '../../platform/outbound/delivery-outcome.js';

/**
 * Why a report was not sent: `throttled` (the endpoint's queue was full), `paused` (the endpoint was
 * paused after a failure), `discarded` (pending when the endpoint turned out unreachable, or its
 * callback was changed or removed), `overloaded` (the process-wide queue bound was reached).
 */
export type DropReason = 'throttled' | 'paused' | 'discarded' | 'overloaded';

export const dropReasons: readonly DropReason[] = ['throttled', 'paused', 'discarded', 'overloaded'];

/** One delivery attempt, as the deliveries API shows it. */
export interface DeliveryAttempt {
  /** Unix ms when the attempt ended. */
  at: number;
  /** The `webhook-id` of the request, so a receiver's log can be matched. */
  webhookId: string;
  url: string;
  outcome: DeliveryOutcomeKind;
  status: number | null;
  latencyMs: number;
  detail?: string;
}

/** An attempt as the persistent delivery log keeps it: a delivery attempt, or a dropped report (`dropped`, the reason as its detail). */
export interface LoggedAttempt extends Omit<DeliveryAttempt, 'outcome'> {
  outcome: LoggedOutcomeKind;
}

/** A report the dispatcher dropped, for the delivery log: the attempt it stands for and the request it would have been sent as. */
export interface DroppedReport {
  attempt: LoggedAttempt & { outcome: 'dropped'; detail: DropReason };
  request: CallbackRequest;
}

export const isDropReason = (value: string | null | undefined): value is DropReason => (dropReasons as readonly (string | null | undefined)[]).includes(value);

export interface DeliveryCounters {
  /** Attempts answered 200. */
  delivered: number;
  /** Attempts that did not end in a 200 (the sum of the next three). */
  failed: number;
  non_200: number;
  /** Socket closed by the receiver before answering. */
  reset: number;
  /** Connect error, timeout, TLS failure or SSRF refusal at delivery time. */
  unreachable: number;
  by_outcome: Record<DeliveryOutcomeKind, number>;
  dropped: Record<DropReason, number>;
}

export const emptyCounters = (): DeliveryCounters => ({
  delivered: 0,
  failed: 0,
  non_200: 0,
  reset: 0,
  unreachable: 0,
  by_outcome: { delivered: 0, non_200: 0, timeout: 0, refused: 0, tls_error: 0, reset: 0, ssrf_refused: 0 },
  dropped: { throttled: 0, paused: 0, discarded: 0, overloaded: 0 },
});

export const countOutcome = (counters: DeliveryCounters, outcome: DeliveryOutcomeKind): void => {
  counters.by_outcome[outcome] += 1;
  if (outcome === 'delivered') {
    counters.delivered += 1;
    return;
  }
  counters.failed += 1;
  if (outcome === 'non_200') counters.non_200 += 1;
  else if (outcome === 'reset') counters.reset += 1;
  else if (isUnreachable(outcome)) counters.unreachable += 1;
};

const copyCounters = (c: DeliveryCounters): DeliveryCounters => ({
  ...c,
  by_outcome: { ...c.by_outcome },
  dropped: { ...c.dropped },
});

interface WorkspaceLog {
  counters: DeliveryCounters;
  recent: CircularBuffer<DeliveryAttempt>;
}

/**
 * Per-workspace delivery counters and a ring of recent attempts, plus process totals for /metrics.
 * Bounded: `recentPerWorkspace` attempts per workspace, `maxWorkspaces` workspaces (the one first
 * seen longest ago is forgotten first).
 */
export class DeliveryLog {
  readonly totals = emptyCounters();
  private readonly workspaces = new Map<string, WorkspaceLog>();

  constructor(
    private readonly recentPerWorkspace = 100,
    private readonly maxWorkspaces = 10_000,
  ) {}

  recordAttempt(owner: string, webhookId: string, url: string, at: number, result: DeliveryOutcome): DeliveryAttempt {
    countOutcome(this.totals, result.outcome);
    const log = this.workspace(owner);
    countOutcome(log.counters, result.outcome);
    const attempt: DeliveryAttempt = { at, webhookId, url, outcome: result.outcome, status: result.status, latencyMs: result.latencyMs };
    if (result.detail !== undefined) attempt.detail = result.detail;
    log.recent.pushEvicting(attempt);
    return attempt;
  }

  recordDrop(owner: string, reason: DropReason, count = 1): void {
    this.totals.dropped[reason] += count;
    this.workspace(owner).counters.dropped[reason] += count;
  }

  /** Counters and recent attempts (newest first) of one workspace. */
  /** Forgets a deleted workspace's attempts and counters (the totals keep what happened). */
  forgetWorkspace(owner: string): void {
    this.workspaces.delete(owner);
  }

  forWorkspace(owner: string): { counters: DeliveryCounters; recent: DeliveryAttempt[] } {
    const log = this.workspaces.get(owner);
    if (!log) return { counters: emptyCounters(), recent: [] };
    return { counters: copyCounters(log.counters), recent: log.recent.toArray().reverse() };
  }

  get workspaceCount(): number {
    return this.workspaces.size;
  }

  private workspace(owner: string): WorkspaceLog {
    let log = this.workspaces.get(owner);
    if (log) return log;
    log = { counters: emptyCounters(), recent: new CircularBuffer<DeliveryAttempt>(this.recentPerWorkspace) };
    this.workspaces.set(owner, log);
    if (this.workspaces.size > this.maxWorkspaces) {
      const oldest = this.workspaces.keys().next().value;
      if (oldest !== undefined) this.workspaces.delete(oldest);
    }
    return log;
  }
}
