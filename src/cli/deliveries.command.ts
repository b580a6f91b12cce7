import { Command, InvalidArgumentError } from 'commander';
import { dropReasons } from '../modules/error-reporting/delivery-log.js';
import { loggedOutcomeKinds, type LoggedOutcomeKind } from '../platform/outbound/delivery-outcome.js';
import type { DeliveriesView, LoggedAttemptDetailView, LoggedAttemptView, SettingsView, TestResultView } from '../modules/error-reporting/error-reporting.schema.js';
import { PlaylineApiError } from '../client/index.js';
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

type Observation = TestResultView['observed'];

/** What the test POST met: outcome, status, time, and the receiver's answer or the failure. */
const observationRows = (o: Observation) => ({
  outcome: o.outcome,
  status: o.status,
  latency_ms: Math.round(o.latency_ms),
  address: o.address ?? null,
  detail: o.detail ?? null,
  response: o.response_excerpt ?? null,
});

/** The saved settings; the signing secret only with --json (it verifies every callback: keep it out of terminals and logs). */
const printSettings = (s: SettingsView, json: boolean): void => {
  if (json) printObject({ ...s }, true);
  else printObject({ callback_url: s.callback_url, enabled: s.enabled, updated_at: new Date(s.updated_at).toISOString(), signing_secret: '(hidden: --json prints it)' }, false);
};

/** `playline callback status|resume|set|test`: the workspace's callback endpoint on a running server. */
export function callbackCommand(): Command {
  const callback = new Command('callback').description('The Error Reporting callback endpoint of a running server: set and test its URL, its state, and resuming it after a pause');

  withApiOptions(
    callback
      .command('set')
      .description('Save the callback URL: the server first POSTs a signed sample report to it and saves it only if answered 200 within 5 s (exit code 1 otherwise, with what it met)')
      .argument('<url>', 'https URL (http only to addresses the server allows, PLAYLINE_OUTBOUND_ALLOWLIST)')
      .option('--disabled', 'save it switched off (reports are not sent until enabled)'),
  ).action(async (url: string, opts: ApiOptions & { disabled?: boolean }) => {
    try {
      printSettings(await clientOf(opts).errorReporting.putSettings({ callback_url: url, ...(opts.disabled === true ? { enabled: false } : {}) }), opts.json === true);
    } catch (err) {
      const observed = err instanceof PlaylineApiError ? (err.body as { observed?: Observation } | undefined)?.observed : undefined;
      if (observed === undefined) throw err;
      // The URL failed its test POST: what the server met is the answer the user needs.
      printObject(observationRows(observed), opts.json === true);
      process.stderr.write(`playline: ${err instanceof Error ? err.message : String(err)}; the callback URL was not saved\n`);
      process.exitCode = 1;
    }
  });

  withApiOptions(
    callback
      .command('test')
      .description('POST a signed sample report to a URL (default: the saved callback URL) and print what it met; exit code 1 unless answered 200 within 5 s')
      .argument('[url]', 'the URL to try (default: the saved one)'),
  ).action(async (url: string | undefined, opts: ApiOptions) => {
    const result = await clientOf(opts).errorReporting.test(url);
    if (opts.json === true) printObject({ ...result }, true);
    else printObject({ callback_url: result.callback_url, passed: result.passed, ...observationRows(result.observed) }, false);
    if (!result.passed) {
      process.stderr.write(`playline: the test POST to ${result.callback_url} did not pass (${result.observed.outcome}${result.observed.status !== null ? ` ${result.observed.status}` : ''})\n`);
      process.exitCode = 1;
    }
  });

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
