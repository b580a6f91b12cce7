import { Command, InvalidArgumentError } from 'commander';
import { dropReasons } from '../modules/error-reporting/delivery-log.js';
import { loggedOutcomeKinds, type LoggedOutcomeKind } from '../platform/outbound/delivery-outcome.js';
import type { DeliveriesView, LoggedAttemptDetailView, LoggedAttemptView } from '../modules/error-reporting/error-reporting.schema.js';
import { clientOf, withApiOptions, type ApiOptions } from './api-options.js';
import { printObject, printRows } from './output.js';

const outcomeOption = (value: string): LoggedOutcomeKind => {
  if (!(loggedOutcomeKinds as readonly string[]).includes(value)) throw new InvalidArgumentError(`one of ${loggedOutcomeKinds.join(', ')}`);
  return value as LoggedOutcomeKind;
};

const limitOption = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError('a whole number from 1 to 100');
  return n;
};

const row = (a: LoggedAttemptView) => ({
  id: a.id,
  time: a.ts_iso,
  outcome: a.outcome,
  status: a.status,
  latency_ms: a.latency_ms,
  webhook_id: a.webhook_id,
  resend_of: a.resend_of,
  detail: a.detail,
});

const printAttempt = (a: LoggedAttemptDetailView, json: boolean): void => {
  if (json) {
    process.stdout.write(`${JSON.stringify(a, null, 2)}\n`);
    return;
  }
  printObject({ ...row(a), url: a.url, ...Object.fromEntries(Object.entries(a.request.headers)) }, false);
  process.stdout.write(`\n${a.request.body}\n`);
};

/** Exit code 1 when an attempt did not end in a 200 (scripts can tell). */
const failedUnlessDelivered = (a: LoggedAttemptView): void => {
  if (a.outcome !== 'delivered') {
    process.stderr.write(`playline: ${a.outcome}${a.detail ? ` (${a.detail})` : ''}\n`);
    process.exitCode = 1;
  }
};

/** `playline deliveries list|show|resend`: the Error Reporting delivery log of a running server. */
export function deliveriesCommand(): Command {
  const deliveries = new Command('deliveries').description(
    'The Error Reporting delivery log of a running server: every callback attempt (all instances) and every dropped report (outcome dropped) with its payload and signature headers; resend one',
  );

  withApiOptions(
    deliveries
      .command('list')
      .description('Logged attempts, newest first')
      .option('--outcome <outcome>', `only this outcome (${loggedOutcomeKinds.join(', ')}; dropped: reports never sent, the reason in detail)`, outcomeOption)
      .option('--limit <n>', 'page size, 1-100 (default 50)', limitOption)
      .option('--cursor <cursor>', 'the page after the one that printed this cursor'),
  ).action(async (opts: ApiOptions & { outcome?: LoggedOutcomeKind; limit?: number; cursor?: string }) => {
    const page = await clientOf(opts).errorReporting.listAttempts({
      ...(opts.outcome ? { outcome: opts.outcome } : {}),
      ...(opts.limit ? { limit: opts.limit } : {}),
      ...(opts.cursor ? { cursor: opts.cursor } : {}),
    });
    if (opts.json) process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    else printRows(page.items.map(row), false, ['id', 'time', 'outcome', 'status', 'latency_ms', 'resend_of', 'detail']);
    if (!opts.json && page.next_cursor) process.stderr.write(`${page.items.length} of ${page.total_items}; next page: --cursor ${page.next_cursor}\n`);
  });

  withApiOptions(
    deliveries.command('show').description('One attempt: outcome, signature headers and the exact body sent').argument('<attempt_id>', 'attempt id (att_...)'),
  ).action(async (id: string, opts: ApiOptions) => printAttempt(await clientOf(opts).errorReporting.getAttempt(id), opts.json === true));

  withApiOptions(
    deliveries
      .command('resend')
      .description('Send a logged report (a dropped one too) again to the current callback URL (signed anew, logged); prints the new attempt, exit code 1 unless it was answered 200')
      .argument('<attempt_id>', 'attempt id (att_...)'),
  ).action(async (id: string, opts: ApiOptions) => {
    const attempt = await clientOf(opts).errorReporting.resend(id);
    printAttempt(attempt, opts.json === true);
    failedUnlessDelivered(attempt);
  });

  return deliveries;
}

const endpointSummary = (d: DeliveriesView) => ({
  callback_url: d.callback_url,
  enabled: d.enabled,
  paused_until: d.endpoint?.paused_until ? new Date(d.endpoint.paused_until).toISOString() : null,
  consecutive_failures: d.endpoint?.consecutive_failures ?? 0,
  queued: d.endpoint?.queued ?? 0,
  delivered: d.counters.delivered,
  failed: d.counters.failed,
  dropped: d.counters.dropped,
});

/** `3 (throttled 0, paused 3, discarded 0, overloaded 0)`: the dropped counts on one line. */
const droppedLine = (dropped: DeliveriesView['counters']['dropped']): string => {
  const counts = dropReasons.map((reason) => [reason, dropped[reason] ?? 0] as const);
  const total = counts.reduce((sum, [, n]) => sum + n, 0);
  return `${total} (${counts.map(([reason, n]) => `${reason} ${n}`).join(', ')})`;
};

const printSummary = (d: DeliveriesView, json: boolean): void => {
  const summary = endpointSummary(d);
  printObject(json ? summary : { ...summary, dropped: droppedLine(summary.dropped) }, json);
};

/** `playline callback status|resume`: the workspace's callback endpoint on a running server. */
export function callbackCommand(): Command {
  const callback = new Command('callback').description('The Error Reporting callback endpoint of a running server: its state, and resuming it after a pause');

  withApiOptions(
    callback
      .command('status')
      .description(
        'The callback URL, whether it is paused, and the counters of the server answering: delivered, failed, and dropped by reason '
          + `(${dropReasons.join(', ')}; dropped reports are in the delivery log, see playline deliveries list --outcome dropped)`,
      ),
  ).action(async (opts: ApiOptions) => printSummary(await clientOf(opts).errorReporting.deliveries(), opts.json === true));

  withApiOptions(callback.command('resume').description('End the pause of the callback endpoint now, on every instance (queued and new reports go out at once)')).action(
    async (opts: ApiOptions) => printSummary(await clientOf(opts).errorReporting.resume(), opts.json === true),
  );

  return callback;
}
