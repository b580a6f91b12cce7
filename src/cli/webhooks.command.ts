import { Command, InvalidArgumentError } from 'commander';
import { loggedOutcomeKinds, type LoggedOutcomeKind } from '../platform/outbound/delivery-outcome.js';
import type { SubscriptionView, SubscriptionWithSecretView, WebhookAttemptDetailView, WebhookAttemptView } from '../modules/webhooks/webhooks.schema.js';
import { operationalEventTypes, type OperationalEventType } from '../platform/operational-events.js';
import { clientOf, withApiOptions, type ApiOptions } from './api-options.js';
import { printObject, printRows } from './output.js';

const eventsOption = (value: string): OperationalEventType[] => {
  const types = value.split(',').map((v) => v.trim()).filter((v) => v !== '');
  const unknown = types.filter((t) => !(operationalEventTypes as readonly string[]).includes(t));
  if (types.length === 0 || unknown.length > 0) throw new InvalidArgumentError(`comma-separated event types, each one of ${operationalEventTypes.join(', ')}`);
  return [...new Set(types)] as OperationalEventType[];
};

const outcomeOption = (value: string): LoggedOutcomeKind => {
  if (!(loggedOutcomeKinds as readonly string[]).includes(value)) throw new InvalidArgumentError(`one of ${loggedOutcomeKinds.join(', ')}`);
  return value as LoggedOutcomeKind;
};

const limitOption = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError('a whole number from 1 to 100');
  return n;
};

const subscriptionRow = (s: SubscriptionView) => ({
  id: s.id,
  url: s.url,
  events: s.event_types.join(','),
  enabled: s.enabled,
  pending: s.pending_deliveries,
  description: s.description,
});

const printSubscription = (s: SubscriptionView | SubscriptionWithSecretView, json: boolean): void => {
  if (json) {
    process.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
    return;
  }
  printObject({ ...subscriptionRow(s), created: new Date(s.created_at).toISOString(), ...('signing_secret' in s ? { signing_secret: s.signing_secret } : {}) }, false);
  if ('signing_secret' in s) process.stderr.write('The signing secret is shown this once: store it now (playline webhooks rotate-secret makes a new one).\n');
};

const attemptRow = (a: WebhookAttemptView) => ({
  id: a.id,
  time: a.ts_iso,
  subscription: a.subscription_id,
  outcome: a.outcome,
  status: a.status,
  webhook_id: a.webhook_id,
  detail: a.detail,
});

const printAttempt = (a: WebhookAttemptDetailView, json: boolean): void => {
  if (json) {
    process.stdout.write(`${JSON.stringify(a, null, 2)}\n`);
    return;
  }
  printObject({ ...attemptRow(a), url: a.url, resend_of: a.resend_of, ...a.request.headers }, false);
  process.stdout.write(`\n${a.request.body}\n`);
};

/** `playline webhooks ...`: operational event webhooks of a running server (subscriptions, the delivery log, resend). */
export function webhooksCommand(): Command {
  const webhooks = new Command('webhooks')
    .description('Operational event webhooks of a running server: subscribe endpoints to asset, live and publishing events (signed, retried), see and resend deliveries')
    .addHelpText('after', `
Events: ${operationalEventTypes.join(', ')}
(recording.ready: a slicer's live event became a ready asset of the library.)

Each event is POSTed signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)
with the subscription's secret, shown once by create and rotate-secret. A failed attempt is retried
5 s, 5 min, 30 min, 2 h, 5 h and 10 h later (7 attempts); retries survive a restart. See docs/webhooks.md.

Examples:
  playline webhooks create --url https://hooks.example.com/playline --events live.started,live.ended
  playline webhooks list
  playline webhooks attempts --outcome non_200
  playline webhooks resend <attempt id>`);

  withApiOptions(
    webhooks
      .command('create')
      .description('Subscribe an endpoint; prints the subscription and its signing secret (shown this once)')
      .requiredOption('--url <url>', 'http(s) URL that receives the events (private and loopback addresses are refused unless PLAYLINE_OUTBOUND_ALLOWLIST permits them)')
      .requiredOption('--events <types>', `comma-separated event types: ${operationalEventTypes.join(', ')}`, eventsOption)
      .option('--description <text>', 'free text for your own reference')
      .option('--disabled', 'create it disabled (no events until enabled)'),
  ).action(async (opts: ApiOptions & { url: string; events: OperationalEventType[]; description?: string; disabled?: boolean }) => {
    const created = await clientOf(opts).webhooks.createSubscription({
      url: opts.url,
      event_types: opts.events,
      ...(opts.description !== undefined ? { description: opts.description } : {}),
      ...(opts.disabled ? { enabled: false } : {}),
    });
    printSubscription(created, opts.json === true);
  });

  withApiOptions(webhooks.command('list').description('The workspace\'s subscriptions, with their pending deliveries')).action(async (opts: ApiOptions) => {
    const list = await clientOf(opts).webhooks.listSubscriptions();
    if (opts.json) process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    else printRows(list.items.map(subscriptionRow), false, ['id', 'url', 'events', 'enabled', 'pending', 'description']);
  });

  withApiOptions(webhooks.command('show').description('One subscription (never its secret)').argument('<subscription_id>', 'subscription id (whs_...)')).action(
    async (id: string, opts: ApiOptions) => printSubscription(await clientOf(opts).webhooks.getSubscription(id), opts.json === true),
  );

  withApiOptions(
    webhooks
      .command('update')
      .description('Change a subscription: only the options given')
      .argument('<subscription_id>', 'subscription id (whs_...)')
      .option('--url <url>', 'a new URL (checked like at creation)')
      .option('--events <types>', 'the new comma-separated event types', eventsOption)
      .option('--description <text>', 'a new description')
      .option('--enable', 'send it events again')
      .option('--disable', 'send it no new events (pending deliveries still go)'),
  ).action(async (id: string, opts: ApiOptions & { url?: string; events?: OperationalEventType[]; description?: string; enable?: boolean; disable?: boolean }) => {
    if (opts.enable && opts.disable) throw new InvalidArgumentError('--enable or --disable, not both');
    const patch = {
      ...(opts.url !== undefined ? { url: opts.url } : {}),
      ...(opts.events !== undefined ? { event_types: opts.events } : {}),
      ...(opts.description !== undefined ? { description: opts.description } : {}),
      ...(opts.enable ? { enabled: true } : opts.disable ? { enabled: false } : {}),
    };
    if (Object.keys(patch).length === 0) throw new InvalidArgumentError('nothing to change: give --url, --events, --description, --enable or --disable');
    printSubscription(await clientOf(opts).webhooks.updateSubscription(id, patch), opts.json === true);
  });

  withApiOptions(webhooks.command('delete').description('Delete a subscription and its pending deliveries (its logged attempts stay)').argument('<subscription_id>', 'subscription id (whs_...)')).action(
    async (id: string, opts: ApiOptions) => {
      const deleted = await clientOf(opts).webhooks.deleteSubscription(id);
      if (opts.json) process.stdout.write(`${JSON.stringify(deleted, null, 2)}\n`);
      else process.stderr.write(`deleted ${id}\n`);
    },
  );

  withApiOptions(
    webhooks.command('rotate-secret').description('Replace the signing secret and print the new one (shown this once); the old one keeps signing for 24 hours').argument('<subscription_id>', 'subscription id (whs_...)'),
  ).action(async (id: string, opts: ApiOptions) => printSubscription(await clientOf(opts).webhooks.rotateSecret(id), opts.json === true));

  withApiOptions(
    webhooks
      .command('attempts')
      .description('The delivery log of events: every attempt (retries and resends), newest first')
      .option('--subscription <subscription_id>', 'only this subscription\'s attempts')
      .option('--outcome <outcome>', `only this outcome (${loggedOutcomeKinds.join(', ')})`, outcomeOption)
      .option('--limit <n>', 'page size, 1-100 (default 50)', limitOption)
      .option('--cursor <cursor>', 'the page after the one that printed this cursor'),
  ).action(async (opts: ApiOptions & { subscription?: string; outcome?: LoggedOutcomeKind; limit?: number; cursor?: string }) => {
    const page = await clientOf(opts).webhooks.listAttempts({
      ...(opts.subscription ? { subscription_id: opts.subscription } : {}),
      ...(opts.outcome ? { outcome: opts.outcome } : {}),
      ...(opts.limit ? { limit: opts.limit } : {}),
      ...(opts.cursor ? { cursor: opts.cursor } : {}),
    });
    if (opts.json) process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    else printRows(page.items.map(attemptRow), false, ['id', 'time', 'subscription', 'outcome', 'status', 'detail']);
    if (!opts.json && page.next_cursor) process.stderr.write(`${page.items.length} of ${page.total_items}; next page: --cursor ${page.next_cursor}\n`);
  });

  withApiOptions(webhooks.command('attempt').description('One attempt: outcome, signature headers and the exact body sent').argument('<attempt_id>', 'attempt id (att_...)')).action(
    async (id: string, opts: ApiOptions) => printAttempt(await clientOf(opts).webhooks.getAttempt(id), opts.json === true),
  );

  withApiOptions(
    webhooks
      .command('resend')
      .description('Send a logged event (a dropped one too) again now to its subscription\'s URL (signed anew, same webhook-id, logged); exit code 1 unless answered 200')
      .argument('<attempt_id>', 'attempt id (att_...)'),
  ).action(async (id: string, opts: ApiOptions) => {
    const attempt = await clientOf(opts).webhooks.resend(id);
    printAttempt(attempt, opts.json === true);
    if (attempt.outcome !== 'delivered') {
      process.stderr.write(`playline: ${attempt.outcome}${attempt.detail ? ` (${attempt.detail})` : ''}\n`);
      process.exitCode = 1;
    }
  });

  return webhooks;
}
