import type { ApiKey } from '../api/types.js';
import { h, setText } from '../dom.js';
import { isMissingRoute, utcTime } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import { Poller } from '../poller.js';
import { ProblemLine, RowActions, scroller, section } from './parts.js';
import type { View, ViewContext } from './view.js';

/** API and ingest keys of the workspace: create (the secret shown once), revoke. */
export function keysView(ctx: ViewContext): View {
  const problem = new ProblemLine();
  const actionProblem = new ProblemLine();
  let keys: ApiKey[] = [];
  /** Revoke takes a second click. */
  const actions = new RowActions({ problem: actionProblem, redraw: () => table.update(keys), refresh: () => poller.refreshNow() });

  const mine = (k: ApiKey): boolean => ctx.api.signsWithKey(k.prefix);
  const revoke = (key: ApiKey): Promise<void> => actions.run(key.id, () => ctx.api.revokeKey(key.id), `Could not revoke ${key.label || key.id}: `, true);

  const table = new KeyedTable<ApiKey>(
    [
      { header: 'Label', text: (k) => k.label || '—', sticky: true },
      {
        header: '',
        text: (k) => (k.revoked_at !== null ? 'Revoked' : actions.isPending(k.id) ? '…' : actions.isConfirming(k.id) ? 'Confirm revoke' : 'Revoke'),
        cellClass: (k) => (actions.isConfirming(k.id) ? 'confirm' : ''),
        title: (k) => (mine(k) ? 'This page signs with this key: sign in with another key to revoke it' : 'Requests signed with a revoked key are refused'),
        action: { run: (k) => void revoke(k), disabled: (k) => k.revoked_at !== null || actions.isPending(k.id) || mine(k) },
      },
      { header: 'Kind', text: (k) => k.kind },
      { header: 'Secret starts', text: (k) => `${k.prefix}…` },
      { header: 'Created', text: (k) => utcTime(k.created_at), sortValue: (k) => k.created_at },
      {
        header: 'Status',
        text: (k) => (k.revoked_at !== null ? `revoked ${utcTime(k.revoked_at)}` : mine(k) ? 'active (this page signs with it)' : 'active'),
        cellClass: (k) => (k.revoked_at !== null ? 'badge status-stopped' : 'badge status-active'),
        sortValue: (k) => (k.revoked_at === null ? 0 : 1),
      },
      { header: 'Key id', text: (k) => k.id },
    ],
    (k) => k.id,
    'API keys',
    { sortable: true, rowClass: (k) => (k.revoked_at !== null ? 'revoked' : '') },
  );
  table.element.id = 'keys';

  // Create: label and kind; the answer's secret is shown here once and never again.
  const label = h('input', { type: 'text', id: 'key-label', maxlength: 200, placeholder: 'what the key is for', autocomplete: 'off' });
  const kind = h('select', { id: 'key-kind' }, h('option', { value: 'api' }, 'API key (calls the API)'), h('option', { value: 'ingest' }, 'Ingest key (submits events only)'));
  const create = h('button', { type: 'submit', class: 'primary', id: 'key-create' }, 'Create key');
  const createProblem = new ProblemLine();
  const secretValue = h('code', { id: 'key-secret' });
  const secretBox = h('div', { class: 'secret-once', id: 'key-secret-box', hidden: true, role: 'status' },
    h('strong', {}, 'Copy the secret now: it is shown only this once.'),
    h('div', { class: 'secret-row' }, secretValue),
    h('p', { class: 'muted', id: 'key-secret-for' }),
  );
  const form = h('form', { class: 'inline-form', id: 'key-form' },
    h('div', { class: 'field' }, h('label', { for: 'key-label' }, 'Label'), label),
    h('div', { class: 'field' }, h('label', { for: 'key-kind' }, 'Kind'), kind),
    h('div', { class: 'field actions' }, create),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    create.disabled = true;
    secretBox.hidden = true;
    ctx.api.createKey(label.value.trim(), kind.value === 'ingest' ? 'ingest' : 'api').then(
      (key) => {
        createProblem.clear();
        setText(secretValue, key.secret ?? '');
        setText(byIdIn(secretBox, 'key-secret-for'), `${key.kind === 'ingest' ? 'Ingest key' : 'API key'} ${key.id}${key.label ? ` (${key.label})` : ''} of workspace ${key.owner}.`);
        secretBox.hidden = false;
        label.value = '';
      },
      (err: unknown) => createProblem.show(err, 'Could not create the key: '),
    ).finally(() => {
      create.disabled = false;
      void poller.refreshNow();
    });
  });

  const element = h(
    'div',
    { class: 'view', id: 'view-keys' },
    section('Create a key', h('p', { class: 'muted' }, 'An API key signs API calls (like the one this page uses); an ingest key only submits playback events. The secret is shown once.'), form, createProblem.element, secretBox),
    section('Keys', h('p', { class: 'muted' }, 'Secrets are never shown again; revoked keys are refused within seconds.'), problem.element, actionProblem.element, scroller(table.element)),
  );

  const poller = new Poller(async () => {
    try {
      keys = (await ctx.api.keys()).items;
      problem.clear();
      table.update(keys);
    } catch (err) {
      problem.show(err, isMissingRoute(err) ? 'This server does not offer key management: ' : 'Could not load the keys: ');
    }
  }, Math.max(ctx.intervalMs, 5000));

  return {
    element,
    show: () => poller.start(),
    hide: () => {
      poller.stop();
      // The secret is not left on screen for whoever opens the view next.
      secretBox.hidden = true;
      setText(secretValue, '');
      actions.clearConfirming();
    },
  };
}

const byIdIn = (root: HTMLElement, id: string): HTMLElement => root.querySelector(`#${id}`) as HTMLElement;
