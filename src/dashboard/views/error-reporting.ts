import { ApiProblem } from '../api/client.js';
import type { CallbackDeliveries, CallbackSettings, CallbackTestResult, LoggedAttempt, LoggedAttemptDetail, LoggedAttemptPage } from '../api/types.js';
import { h, setText } from '../dom.js';
import { count, describeFailure, isMissingRoute, millis, utcTime } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import { Poller } from '../poller.js';
import { ProblemLine, scroller, section } from './parts.js';
import type { View, ViewContext } from './view.js';

type Observation = CallbackTestResult['observed'];

const outcomes: readonly LoggedAttempt['outcome'][] = ['delivered', 'non_200', 'timeout', 'refused', 'tls_error', 'reset', 'ssrf_refused', 'dropped'];

/** `delivered: HTTP 200 after 3 ms`, `dropped (paused): not sent`: what one logged attempt came to. */
const describeAttempt = (a: LoggedAttempt): string =>
  a.outcome === 'dropped'
    ? `dropped (${a.drop_reason ?? a.detail ?? 'unknown reason'}): not sent`
    : `${a.outcome}${a.status !== null ? `: HTTP ${a.status}` : ''} after ${millis(a.latency_ms)}${a.detail && a.detail !== `HTTP ${a.status}` ? ` (${a.detail})` : ''}`;

/** `non_200: HTTP 500 after 12.0 ms (detail)`: what a test POST observed. */
export const describeObservation = (o: Observation): string =>
  `${o.outcome}${o.status !== null ? `: HTTP ${o.status}` : ''} after ${millis(o.latency_ms)}${o.detail && o.detail !== `HTTP ${o.status}` ? ` (${o.detail})` : ''}`;

const observedOf = (err: unknown): Observation | undefined => {
  const observed = err instanceof ApiProblem ? err.body?.observed : undefined;
  return observed && typeof observed === 'object' ? (observed as Observation) : undefined;
};

/** Callback settings with test-before-save, the signing secret, and recent deliveries. */
export function errorReportingView(ctx: ViewContext): View {
  const current = h('p', { id: 'callback-current' });
  const url = h('input', { type: 'url', id: 'callback-url', placeholder: 'https://example.com/playline-errors', autocomplete: 'off', required: true, size: 60 });
  const enabled = h('input', { type: 'checkbox', id: 'callback-enabled', checked: true });
  const testButton = h('button', { type: 'button', id: 'callback-test' }, 'Test');
  const saveButton = h('button', { type: 'submit', id: 'callback-save', class: 'primary' }, 'Test and save');
  const outcome = h('p', { id: 'callback-outcome', role: 'status', hidden: true });
  const secret = h('code', { id: 'signing-secret' }, '••••••••');
  let secretValue = '';
  const reveal = h('button', { type: 'button', class: 'link' }, 'Show');
  reveal.addEventListener('click', () => {
    const shown = secret.textContent === secretValue;
    setText(secret, shown ? '••••••••' : secretValue);
    setText(reveal, shown ? 'Show' : 'Hide');
  });
  // Rotation takes a second click: receivers must learn the new secret (the old one signs too for 24 hours).
  const rotate = h('button', { type: 'button', class: 'link', id: 'signing-secret-rotate', title: 'A new signing secret; the old one keeps signing (a second signature) for 24 hours' }, 'Rotate');
  let rotateArmed = false;
  rotate.addEventListener('click', () => {
    if (!rotateArmed) {
      rotateArmed = true;
      setText(rotate, 'Confirm rotate');
      rotate.classList.add('confirm');
      return;
    }
    rotateArmed = false;
    rotate.disabled = true;
    ctx.api.rotateCallbackSecret().then(
      (s) => {
        showSettings(s, false);
        setText(secret, s.signing_secret);
        setText(reveal, 'Hide');
        loadProblem.clear();
      },
      (err: unknown) => loadProblem.show(err, 'Could not rotate the signing secret: '),
    ).finally(() => {
      rotate.disabled = false;
      setText(rotate, 'Rotate');
      rotate.classList.remove('confirm');
    });
  });
  const loadProblem = new ProblemLine();

  const form = h(
    'form',
    { id: 'callback-form', method: 'post', action: '#', novalidate: true },
    h('label', { for: 'callback-url' }, 'Callback URL'),
    h('div', { class: 'row' }, url, testButton, saveButton),
    h('label', { class: 'inline' }, enabled, ' Enabled'),
    outcome,
  );

  const counters = h('p', { id: 'delivery-counters', class: 'muted' });
  const paused = h('p', { id: 'callback-paused', class: 'problem', hidden: true });
  const pausedText = h('span');
  const resumeButton = h('button', { type: 'button', id: 'callback-resume' }, 'Resume now');
  paused.append(pausedText, ' ', resumeButton);
  const action = h('p', { id: 'delivery-action', role: 'status', hidden: true });
  const filter = h(
    'select',
    { id: 'delivery-filter', 'aria-label': 'Show attempts with this outcome' },
    h('option', { value: '' }, 'All outcomes'),
    ...outcomes.map((o) => h('option', { value: o }, o)),
  );
  const logTotal = h('span', { id: 'delivery-total', class: 'muted' });
  const noAttempts = h('p', { class: 'empty' }, 'No delivery attempts logged. Every accepted playback error event (type "error") of this workspace is POSTed to the saved callback URL, and each attempt is kept here, with the reports dropped unsent (outcome dropped).');
  let hasCallback = false;
  const attempts: KeyedTable<LoggedAttempt> = new KeyedTable<LoggedAttempt>(
    [
      { header: 'Time', text: (a) => utcTime(a.ts), sticky: true },
      { header: 'Payload', text: () => 'View', action: { run: (a) => void showDetail(a.id) } },
      { header: 'Resend', text: () => 'Resend', action: { run: (a, button) => void resend(a, button), disabled: () => !hasCallback } },
      { header: 'Outcome', text: (a) => a.outcome, cellClass: (a) => (a.outcome === 'delivered' ? 'ok' : 'warn') },
      { header: 'Status', text: (a) => (a.status === null ? '—' : String(a.status)), numeric: true },
      { header: 'Latency', text: (a) => (a.outcome === 'dropped' ? '—' : millis(a.latency_ms)), numeric: true },
      { header: 'Detail', text: (a) => (a.outcome === 'dropped' ? `not sent: ${a.drop_reason ?? a.detail ?? ''}` : a.detail ?? (a.resend_of ? `resend of ${a.resend_of}` : '')), title: (a) => a.webhook_id },
    ],
    (a) => a.id,
    'Delivery log',
  );
  attempts.element.id = 'delivery-attempts';
  const tableBox = scroller(attempts.element);
  const more = h('button', { type: 'button', id: 'delivery-more', hidden: true }, 'Older attempts');
  const deliveriesProblem = new ProblemLine();

  const detailTitle = h('h3', { id: 'delivery-detail-title' });
  const detailHeaders = h('pre', { id: 'delivery-headers' });
  const detailPayload = h('pre', { id: 'delivery-payload' });
  const closeDetail = h('button', { type: 'button', class: 'link', id: 'delivery-detail-close' }, 'Close');
  const detail = h(
    'div',
    { id: 'delivery-detail', hidden: true },
    h('div', { class: 'row' }, detailTitle, closeDetail),
    h('p', { class: 'muted' }, 'Signature headers sent, or for a dropped report the ones it would have been sent with (verify them with the signing secret, see docs/webhooks.md):'),
    detailHeaders,
    h('p', { class: 'muted' }, 'Payload (the report POSTed, or dropped unsent):'),
    detailPayload,
  );
  closeDetail.addEventListener('click', () => {
    detail.hidden = true;
  });

  const element = h(
    'div',
    { class: 'view', id: 'view-error-reporting' },
    section('Callback', current, paused, form, h('p', { class: 'muted' }, 'The URL is saved only when a signed test POST to it is answered 200 within 5 s; a passing test of the saved URL also ends a pause. Receivers verify the webhook-signature header with the signing secret: ', secret, ' ', reveal, ' ', rotate), loadProblem.element),
    section(
      'Delivery log',
      counters,
      h('div', { class: 'row' }, h('label', { for: 'delivery-filter' }, 'Outcome '), filter, logTotal),
      action,
      deliveriesProblem.element,
      noAttempts,
      tableBox,
      more,
      detail,
    ),
  );

  const say = (text: string, ok: boolean): void => {
    setText(outcome, text);
    outcome.className = ok ? 'result ok' : 'result problem';
    outcome.hidden = false;
  };

  const tell = (text: string, ok: boolean): void => {
    setText(action, text);
    action.className = ok ? 'result ok' : 'result problem';
    action.hidden = false;
  };

  const showSettings = (s: CallbackSettings, fillForm: boolean): void => {
    setText(current, s.callback_url ? `Reports go to ${s.callback_url} (${s.enabled ? 'enabled' : 'disabled'}).` : 'No callback URL saved: playback errors are not reported. Enter one below.');
    hasCallback = s.callback_url !== null && s.enabled;
    if (fillForm && s.callback_url && url.value === '') url.value = s.callback_url;
    if (fillForm) enabled.checked = s.callback_url ? s.enabled : true;
    secretValue = s.signing_secret;
    if (secret.textContent !== '••••••••') setText(secret, secretValue);
  };

  const busy = async (button: HTMLButtonElement, work: () => Promise<void>): Promise<void> => {
    if (url.value.trim() === '') {
      say('Enter the callback URL first.', false);
      return;
    }
    testButton.disabled = saveButton.disabled = true;
    // The previous outcome goes while a new test runs: it no longer describes what is on screen.
    outcome.hidden = true;
    const label = button.textContent ?? '';
    setText(button, 'Testing…');
    try {
      await work();
    } finally {
      setText(button, label);
      testButton.disabled = saveButton.disabled = false;
    }
  };

  testButton.addEventListener('click', () =>
    void busy(testButton, async () => {
      try {
        const result = await ctx.api.testCallback(url.value.trim());
        say(`${result.passed ? 'Test passed' : 'Test failed'}: ${describeObservation(result.observed)}. Nothing was saved.`, result.passed);
        // A passing test of the saved URL ends its pause: show it.
        if (result.passed) void poller.refreshNow();
      } catch (err) {
        const observed = observedOf(err);
        say(`Test failed: ${describeFailure(err)}${observed ? `. Observed ${describeObservation(observed)}` : ''}.`, false);
      }
    }),
  );

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(saveButton, async () => {
      try {
        const saved = await ctx.api.saveCallback(url.value.trim(), enabled.checked);
        showSettings(saved, false);
        say(`Saved: the test POST was answered 200. Playback errors now go to ${saved.callback_url ?? ''}.`, true);
        void poller.refreshNow();
      } catch (err) {
        const observed = observedOf(err);
        say(`${describeFailure(err)}${observed ? `. Observed ${describeObservation(observed)}` : ''}. Nothing was saved.`, false);
      }
    });
  });

  const showDeliveries = (d: CallbackDeliveries): void => {
    const dropped = Object.entries(d.counters.dropped).filter(([, n]) => n > 0).map(([reason, n]) => `${reason} ${count(n)}`);
    setText(counters, `This server since its start: delivered ${count(d.counters.delivered)}, failed ${count(d.counters.failed)}, dropped ${dropped.length > 0 ? dropped.join(', ') : '0'}.`);
    const until = d.endpoint?.paused_until ?? null;
    if (until !== null) setText(pausedText, `Paused until ${utcTime(until)} after ${count(d.endpoint?.consecutive_failures ?? 0)} failed attempt(s): new reports are dropped meanwhile (logged as dropped, they can be resent).`);
    paused.hidden = until === null;
  };

  // The first page is refreshed by the poller; older pages, once asked for, stay below it.
  let older: LoggedAttempt[] = [];
  let olderCursor: string | null = null;
  let firstCursor: string | null = null;
  let firstPage: LoggedAttempt[] = [];
  const render = (): void => {
    const rows = [...firstPage, ...older];
    attempts.update(rows);
    tableBox.hidden = rows.length === 0;
    noAttempts.hidden = rows.length > 0;
    more.hidden = (older.length > 0 ? olderCursor : firstCursor) === null;
  };
  const showLog = (page: LoggedAttemptPage): void => {
    firstPage = page.items;
    firstCursor = page.next_cursor;
    setText(logTotal, ` ${count(page.total_items)} logged`);
    render();
  };
  const outcomeFilter = () => filter.value || undefined;

  more.addEventListener('click', () => {
    const cursor = older.length > 0 ? olderCursor : firstCursor;
    if (cursor === null) return;
    more.disabled = true;
    ctx.api
      .deliveryLog({ outcome: outcomeFilter(), limit: 50, cursor })
      .then((page) => {
        older = [...older, ...page.items];
        olderCursor = page.next_cursor;
        render();
      })
      .catch((err: unknown) => deliveriesProblem.show(err, 'Could not load older attempts: '))
      .finally(() => {
        more.disabled = false;
      });
  });

  const showDetail = async (attemptId: string): Promise<void> => {
    try {
      const a: LoggedAttemptDetail = await ctx.api.deliveryAttempt(attemptId);
      setText(detailTitle, `${a.id}: ${describeAttempt(a)}, ${utcTime(a.ts)}`);
      setText(detailHeaders, Object.entries(a.request.headers).map(([k, v]) => `${k}: ${v}`).join('\n'));
      setText(detailPayload, JSON.stringify(a.payload, null, 2));
      detail.hidden = false;
      detail.scrollIntoView({ block: 'nearest' });
    } catch (err) {
      tell(`Could not load ${attemptId}: ${describeFailure(err)}.`, false);
    }
  };

  const resend = async (a: LoggedAttempt, button: HTMLButtonElement): Promise<void> => {
    button.disabled = true;
    setText(button, 'Sending…');
    try {
      const sent = await ctx.api.resendAttempt(a.id);
      tell(`Resent ${a.id} as ${sent.id}: ${describeAttempt(sent)}.`, sent.outcome === 'delivered');
      await poller.refreshNow();
    } catch (err) {
      tell(`Resend failed: ${describeFailure(err)}.`, false);
    } finally {
      setText(button, 'Resend');
      button.disabled = !hasCallback;
    }
  };

  resumeButton.addEventListener('click', () => {
    resumeButton.disabled = true;
    ctx.api
      .resumeCallback()
      .then((d) => {
        showDeliveries(d);
        tell('Resumed: reports go to the callback again.', true);
      })
      .catch((err: unknown) => tell(`Resume failed: ${describeFailure(err)}.`, false))
      .finally(() => {
        resumeButton.disabled = false;
      });
  });

  let first = true;
  const poller = new Poller(async () => {
    const [settings, deliveries, log] = await Promise.allSettled([ctx.api.callbackSettings(), ctx.api.deliveries(), ctx.api.deliveryLog({ outcome: outcomeFilter(), limit: 50 })]);
    if (settings.status === 'fulfilled') {
      showSettings(settings.value, first);
      first = false;
      loadProblem.clear();
    } else loadProblem.show(settings.reason, isMissingRoute(settings.reason) ? 'This server does not offer Error Reporting yet: ' : 'Could not load the settings: ');
    if (deliveries.status === 'fulfilled') showDeliveries(deliveries.value);
    if (log.status === 'fulfilled') showLog(log.value);
    const failed = deliveries.status === 'rejected' ? deliveries.reason : log.status === 'rejected' ? log.reason : undefined;
    if (failed === undefined) deliveriesProblem.clear();
    else deliveriesProblem.show(failed, 'Could not load deliveries: ');
  }, Math.max(ctx.intervalMs, 3000));

  filter.addEventListener('change', () => {
    older = [];
    olderCursor = null;
    void poller.refreshNow();
  });

  return { element, show: () => poller.start(), hide: () => poller.stop() };
}
