import type { OperationalEventType } from '../../platform/operational-events.js';
import type { WebhookAttempt, WebhookAttemptDetail, WebhookSubscription } from '../api/types.js';
import { h, setText } from '../dom.js';
import { isMissingRoute, utcTime } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import { Poller } from '../poller.js';
import { ProblemLine, RowActions, scroller, section, showFieldErrors } from './parts.js';
import type { View, ViewContext } from './view.js';

// Every event type the API accepts (the Record type makes the compiler check none is missing).
const eventLabels: Record<OperationalEventType, string> = {
  'asset.ready': 'asset.ready', 'asset.failed': 'asset.failed', 'live.started': 'live.started', 'live.ended': 'live.ended',
  'recording.ready': 'recording.ready', 'publishing.active': 'publishing.active', 'publishing.error': 'publishing.error',
};
const operationalEventTypes = Object.keys(eventLabels) as OperationalEventType[];

/**
 * Operational event webhooks: the workspace's subscribed endpoints (create with the events to
 * send, the signing secret shown once; disable, delete) and the latest delivery attempts, with
 * resend.
 */
export function webhooksView(ctx: ViewContext): View {
  const problem = new ProblemLine();
  const actionProblem = new ProblemLine();
  let subscriptions: WebhookSubscription[] = [];
  let attempts: WebhookAttempt[] = [];
  /** Delete takes a second click; enable/disable does not. */
  const actions = new RowActions({ problem: actionProblem, redraw: () => table.update(subscriptions), refresh: () => poller.refreshNow() });
  const rotations = new RowActions({ problem: actionProblem, redraw: () => table.update(subscriptions), refresh: () => poller.refreshNow() });
  const resends = new RowActions({ problem: actionProblem, redraw: () => attemptTable.update(attempts), refresh: () => poller.refreshNow() });

  // Create.
  const url = h('input', { type: 'url', id: 'webhook-url', maxlength: 2048, placeholder: 'https://example.com/hooks/playline', autocomplete: 'off', required: true, size: 40 });
  const description = h('input', { type: 'text', id: 'webhook-description', maxlength: 200, autocomplete: 'off' });
  const boxes = new Map<OperationalEventType, HTMLInputElement>(
    operationalEventTypes.map((type) => [type, h('input', { type: 'checkbox', id: `webhook-event-${type.replace('.', '-')}`, value: type, checked: true })]),
  );
  const events = h('fieldset', { class: 'field checks', id: 'webhook-events' },
    h('legend', {}, 'Events'),
    ...[...boxes].map(([type, box]) => h('label', { for: box.id, class: 'check' }, box, ` ${type}`)),
  );
  const fieldError = (path: string) => h('span', { class: 'field-error', 'data-error-for': path, hidden: true });
  const fieldErrors = new Map<string, HTMLElement>(['/url', '/event_types', '/description'].map((p) => [p, fieldError(p)]));
  const create = h('button', { type: 'submit', class: 'primary', id: 'webhook-create' }, 'Subscribe');
  const createProblem = new ProblemLine();
  const form = h('form', { class: 'inline-form', id: 'webhook-form' },
    h('div', { class: 'field' }, h('label', { for: url.id }, 'Endpoint URL'), url, fieldErrors.get('/url') as HTMLElement),
    h('div', { class: 'field' }, h('label', { for: description.id }, 'Description'), description, fieldErrors.get('/description') as HTMLElement),
    events,
    fieldErrors.get('/event_types') as HTMLElement,
    h('div', { class: 'field actions' }, create),
  );
  // The signing secret, shown once after the subscription is made (never listed).
  const secretValue = h('code', { id: 'webhook-secret' });
  const secretFor = h('p', { class: 'muted', id: 'webhook-secret-for' });
  const secretBox = h('div', { class: 'secret-once', id: 'webhook-secret-box', hidden: true, role: 'status' },
    h('strong', {}, 'Signing secret: copy it now, it is not shown again.'),
    h('div', { class: 'secret-row' }, secretValue),
    secretFor,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = [...boxes].filter(([, box]) => box.checked).map(([type]) => type);
    create.disabled = true;
    ctx.api
      .createWebhookSubscription({ url: url.value.trim(), event_types: chosen, ...(description.value.trim() ? { description: description.value.trim() } : {}) })
      .then(
        (made) => {
          showFieldErrors(null, fieldErrors);
          createProblem.clear();
          setText(secretValue, made.signing_secret);
          setText(secretFor, `For ${made.url}: verify each request's webhook-signature with it (Standard Webhooks).`);
          secretBox.hidden = false;
          url.value = '';
          description.value = '';
        },
        (err: unknown) => {
          const rest = showFieldErrors(err, fieldErrors);
          createProblem.show(err, rest.length > 0 ? `Not subscribed (${rest.join('; ')}): ` : 'Not subscribed: ');
        },
      )
      .finally(() => {
        create.disabled = false;
        void poller.refreshNow();
      });
  });

  const table = new KeyedTable<WebhookSubscription>(
    [
      { header: 'Endpoint', text: (s) => s.url, title: (s) => `Subscription ${s.id}`, wrap: true, sticky: true },
      {
        header: '',
        text: () => '',
        actions: [
          {
            label: (s) => (s.enabled ? 'Disable' : 'Enable'),
            title: 'A disabled subscription gets no new events (pending ones still go)',
            run: (s) => void actions.run(s.id, () => ctx.api.setWebhookSubscriptionEnabled(s.id, !s.enabled), `Could not change ${s.url}: `, false),
            disabled: (s) => actions.isPending(s.id),
          },
          {
            label: (s) => (rotations.isPending(s.id) ? '…' : rotations.isConfirming(s.id) ? 'Confirm rotate' : 'Rotate secret'),
            title: 'A new signing secret, shown once; the old one keeps signing (a second signature) for 24 hours',
            className: (s) => (rotations.isConfirming(s.id) ? 'confirm' : ''),
            run: (s) =>
              void rotations.run(s.id, async () => {
                const rotated = await ctx.api.rotateWebhookSecret(s.id);
                setText(secretValue, rotated.signing_secret);
                setText(secretFor, `New secret for ${rotated.url}: the old one also signs for 24 hours, time to update the receiver.`);
                secretBox.hidden = false;
              }, `Could not rotate the secret of ${s.url}: `, true),
            disabled: (s) => rotations.isPending(s.id) || actions.isPending(s.id),
          },
          {
            label: (s) => (actions.isPending(s.id) ? '…' : actions.isConfirming(s.id) ? 'Confirm delete' : 'Delete'),
            className: (s) => (actions.isConfirming(s.id) ? 'confirm' : ''),
            run: (s) => void actions.run(s.id, () => ctx.api.deleteWebhookSubscription(s.id), `Could not delete ${s.url}: `, true),
            disabled: (s) => actions.isPending(s.id),
          },
        ],
      },
      { header: 'Events', text: (s) => s.event_types.join(', '), wrap: true },
      { header: 'Description', text: (s) => s.description, wrap: true, optional: true },
      { header: 'State', text: (s) => (s.enabled ? 'enabled' : 'disabled'), cellClass: (s) => `badge ${s.enabled ? 'state-active' : 'state-stopped'}` },
      { header: 'Pending', text: (s) => String(s.pending_deliveries), numeric: true, sortValue: (s) => s.pending_deliveries },
      { header: 'Created', text: (s) => utcTime(s.created_at), sortValue: (s) => s.created_at },
    ],
    (s) => s.id,
    'Subscribed endpoints',
    { sortable: true },
  );
  table.element.id = 'webhook-subscriptions';
  const empty = h('p', { class: 'muted', id: 'webhooks-empty', hidden: true }, 'No endpoint is subscribed: operational events go nowhere.');

  const endpointOf = (a: WebhookAttempt) => subscriptions.find((s) => s.id === a.subscription_id)?.url ?? a.url;
  const attemptTable = new KeyedTable<WebhookAttempt>(
    [
      { header: 'Event', text: (a) => details.get(a.id)?.event.type ?? '…', title: (a) => `webhook-id ${a.webhook_id}`, sticky: true },
      {
        header: '',
        text: () => '',
        actions: [
          {
            label: (a) => (shownDetail === a.id ? 'Hide payload' : 'Payload'),
            title: 'The event and the exact body sent',
            run: (a) => void showPayload(a),
          },
          {
            label: (a) => (resends.isPending(a.id) ? '…' : 'Resend'),
            title: 'Sends the same event (same webhook-id) again now',
            run: (a) => void resends.run(a.id, () => ctx.api.resendWebhookAttempt(a.id), 'Resend failed: ', false),
            disabled: (a) => resends.isPending(a.id),
          },
        ],
      },
      { header: 'Time', text: (a) => utcTime(a.ts), sortValue: (a) => a.ts },
      { header: 'Endpoint', text: endpointOf, wrap: true },
      { header: 'Outcome', text: (a) => (a.status === null ? a.outcome : `${a.outcome} (${a.status})`), cellClass: (a) => `badge outcome-${a.outcome}` },
      { header: 'Detail', text: (a) => a.detail ?? '', wrap: true, optional: true },
    ],
    (a) => a.id,
    'Latest delivery attempts',
    { sortable: true },
  );
  attemptTable.element.id = 'webhook-attempts';
  // Attempts never change once logged: each one's event (type and body) is read once and kept.
  const details = new Map<string, WebhookAttemptDetail>();
  const learnDetails = async (list: readonly WebhookAttempt[]): Promise<void> => {
    const missing = list.filter((a) => !details.has(a.id)).slice(0, 20);
    const read = await Promise.allSettled(missing.map((a) => ctx.api.webhookAttempt(a.id)));
    read.forEach((r) => {
      if (r.status === 'fulfilled') details.set(r.value.id, r.value);
    });
    for (const id of details.keys()) if (!list.some((a) => a.id === id) && details.size > 200) details.delete(id);
    if (missing.length > 0) attemptTable.update(attempts);
  };
  let shownDetail: string | undefined;
  const payloadTitle = h('h3', { id: 'webhook-payload-title' });
  const payloadBody = h('pre', { id: 'webhook-payload' });
  const payloadBox = h('div', { id: 'webhook-payload-box', hidden: true }, payloadTitle, payloadBody);
  const showPayload = async (a: WebhookAttempt): Promise<void> => {
    if (shownDetail === a.id) {
      shownDetail = undefined;
      payloadBox.hidden = true;
      attemptTable.update(attempts);
      return;
    }
    shownDetail = a.id;
    const detail = details.get(a.id) ?? (await ctx.api.webhookAttempt(a.id));
    details.set(a.id, detail);
    setText(payloadTitle, `${detail.event.type} at ${detail.event.timestamp} (webhook-id ${detail.webhook_id})`);
    setText(payloadBody, JSON.stringify(detail.event.data, null, 2));
    payloadBox.hidden = false;
    attemptTable.update(attempts);
  };
  const noAttempts = h('p', { class: 'muted', id: 'webhook-attempts-empty', hidden: true }, 'No delivery attempt yet.');

  const element = h(
    'div',
    { class: 'view', id: 'view-webhooks' },
    section('Subscribe an endpoint',
      h('p', { class: 'muted' },
        'Operational events (assets ready or failed, live events starting and ending, recordings ready, publishing active or failing) are POSTed to the endpoint, ',
        'signed (Standard Webhooks) and retried on a schedule until it answers 2xx.'),
      form, createProblem.element, secretBox),
    section('Endpoints', problem.element, actionProblem.element, empty, scroller(table.element)),
    section('Deliveries', noAttempts, scroller(attemptTable.element), payloadBox),
  );

  const poller = new Poller(async () => {
    try {
      const [list, page] = await Promise.all([ctx.api.webhookSubscriptions(), ctx.api.webhookAttempts(20)]);
      subscriptions = list.items;
      attempts = page.items;
      problem.clear();
      empty.hidden = subscriptions.length > 0;
      noAttempts.hidden = attempts.length > 0;
      table.update(subscriptions);
      attemptTable.update(attempts);
      void learnDetails(attempts).catch(() => undefined);
    } catch (err) {
      problem.show(err, isMissingRoute(err) ? 'This server does not offer webhooks: ' : 'Could not load the webhook subscriptions: ');
    }
  }, Math.max(ctx.intervalMs, 3000));

  return {
    element,
    show: () => poller.start(),
    hide: () => {
      poller.stop();
      actions.clearConfirming();
      rotations.clearConfirming();
      // The secret is not left on screen for whoever opens the view next.
      secretBox.hidden = true;
      setText(secretValue, '');
    },
  };
}
