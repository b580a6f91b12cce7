import { ApiProblem } from '../api/client.js';
import type { CallbackDeliveries, CallbackSettings, CallbackTestResult } from '../api/types.js';
import { h, setText } from '../dom.js';
import { count, describeFailure, isMissingRoute, millis, utcTime } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import { Poller } from '../poller.js';
import { ProblemLine, section } from './parts.js';
import type { View, ViewContext } from './view.js';

type Observation = CallbackTestResult['observed'];
type Attempt = CallbackDeliveries['recent'][number];

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
  const noAttempts = h('p', { class: 'empty' }, 'No delivery attempts yet. Every accepted playback error event (type "error") of this workspace is POSTed to the saved callback URL.');
  const attempts = new KeyedTable<Attempt>(
    [
      { header: 'Time', text: (a) => utcTime(a.ts) },
      { header: 'Outcome', text: (a) => a.outcome, cellClass: (a) => (a.outcome === 'delivered' ? 'ok' : 'warn') },
      { header: 'Status', text: (a) => (a.status === null ? '—' : String(a.status)), numeric: true },
      { header: 'Latency', text: (a) => millis(a.latency_ms), numeric: true },
      { header: 'Detail', text: (a) => a.detail ?? '' },
      { header: 'Webhook id', text: (a) => a.webhook_id },
    ],
    (a) => `${a.webhook_id}:${a.ts}`,
    'Recent delivery attempts',
  );
  attempts.element.id = 'delivery-attempts';
  const deliveriesProblem = new ProblemLine();

  const element = h(
    'div',
    { class: 'view', id: 'view-error-reporting' },
    section('Callback', current, form, h('p', { class: 'muted' }, 'The URL is saved only when a signed test POST to it is answered 200 within 5 s. Receivers verify the webhook-signature header with the signing secret: ', secret, ' ', reveal), loadProblem.element),
    section('Recent deliveries', counters, deliveriesProblem.element, noAttempts, attempts.element),
  );

  const say = (text: string, ok: boolean): void => {
    setText(outcome, text);
    outcome.className = ok ? 'result ok' : 'result problem';
    outcome.hidden = false;
  };

  const showSettings = (s: CallbackSettings, fillForm: boolean): void => {
    setText(current, s.callback_url ? `Reports go to ${s.callback_url} (${s.enabled ? 'enabled' : 'disabled'}).` : 'No callback URL saved: playback errors are not reported. Enter one below.');
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
      } catch (err) {
        const observed = observedOf(err);
        say(`${describeFailure(err)}${observed ? `. Observed ${describeObservation(observed)}` : ''}. Nothing was saved.`, false);
      }
    });
  });

  const showDeliveries = (d: CallbackDeliveries): void => {
    const dropped = Object.entries(d.counters.dropped).filter(([, n]) => n > 0).map(([reason, n]) => `${reason} ${count(n)}`);
    const paused = d.endpoint?.paused_until ? ` Paused until ${utcTime(d.endpoint.paused_until)} after a failure.` : '';
    setText(counters, `Delivered ${count(d.counters.delivered)}, failed ${count(d.counters.failed)}, dropped ${dropped.length > 0 ? dropped.join(', ') : '0'}.${paused}`);
    attempts.update(d.recent);
    attempts.element.hidden = d.recent.length === 0;
    noAttempts.hidden = d.recent.length > 0;
  };

  let first = true;
  const poller = new Poller(async () => {
    const [settings, deliveries] = await Promise.allSettled([ctx.api.callbackSettings(), ctx.api.deliveries()]);
    if (settings.status === 'fulfilled') {
      showSettings(settings.value, first);
      first = false;
      loadProblem.clear();
    } else loadProblem.show(settings.reason, isMissingRoute(settings.reason) ? 'This server does not offer Error Reporting yet: ' : 'Could not load the settings: ');
    if (deliveries.status === 'fulfilled') {
      showDeliveries(deliveries.value);
      deliveriesProblem.clear();
    } else deliveriesProblem.show(deliveries.reason, 'Could not load deliveries: ');
  }, Math.max(ctx.intervalMs, 3000));

  return { element, show: () => poller.start(), hide: () => poller.stop() };
}
