import { Command, InvalidArgumentError } from 'commander';
import { deliveryOutcomeKinds, type DeliveryOutcomeKind } from '../modules/error-reporting/delivery-outcome.js';
import type { DeliveriesView, LoggedAttemptDetailView, LoggedAttemptView } from '../modules/error-reporting/error-reporting.schema.js';
import { clientOf, withApiOptions, type ApiOptions } from './api-options.js';
import { printObject, printRows } from './output.js';

const outcomeOption = (value: string): DeliveryOutcomeKind => {
  if (!(deliveryOutcomeKinds as readonly string[]).includes(value)) throw new InvalidArgumentError(`one of ${deliveryOutcomeKinds.join(', ')}`);
  return value as DeliveryOutcomeKind;
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
    'The Error Reporting delivery log of a running server: every callback attempt (all instances) with its payload and signature headers; resend one',
  );

  withApiOptions(
    deliveries
      .command('list')
      .description('Logged attempts, newest first')
      .option('--outcome <outcome>', `only this outcome (${deliveryOutcomeKinds.join(', ')})`, outcomeOption)
      .option('--limit <n>', 'page size, 1-100 (default 50)', limitOption)
      .option('--cursor <cursor>', 'the page after the one that printed this cursor'),
  ).action(async (opts: ApiOptions & { outcome?: DeliveryOutcomeKind; limit?: number; cursor?: string }) => {
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
      .description('Send a logged report again to the current callback URL (signed anew, logged); prints the new attempt, exit code 1 unless it was answered 200')
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
});

/** `playline callback status|resume`: the workspace's callback endpoint on a running server. */
export function callbackCommand(): Command {
  const callback = new Command('callback').description('The Error Reporting callback endpoint of a running server: its state, and resuming it after a pause');

  withApiOptions(callback.command('status').description('The callback URL, whether it is paused, and the delivery counters of the server answering')).action(
    async (opts: ApiOptions) => printObject(endpointSummary(await clientOf(opts).errorReporting.deliveries()), opts.json === true),
  );

  withApiOptions(callback.command('resume').description('End the pause of the callback endpoint now, on every instance (queued and new reports go out at once)')).action(
    async (opts: ApiOptions) => printObject(endpointSummary(await clientOf(opts).errorReporting.resume()), opts.json === true),
  );

  return callback;
}
