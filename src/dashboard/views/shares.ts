import type { ContentShare } from '../api/types.js';
import { h, setText } from '../dom.js';
import { isMissingRoute, utcTime } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import { Poller } from '../poller.js';
import { ProblemLine, RowActions, scroller, section } from './parts.js';
import type { View, ViewContext } from './view.js';

const WORKSPACE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The workspaces this one shares its content with (they play it with coid=<this workspace>): add, stop sharing. */
export function sharesView(ctx: ViewContext): View {
  const problem = new ProblemLine();
  const actionProblem = new ProblemLine();
  let shares: ContentShare[] = [];
  /** Stop sharing takes a second click. */
  const actions = new RowActions({ problem: actionProblem, redraw: () => table.update(shares), refresh: () => poller.refreshNow() });

  const table = new KeyedTable<ContentShare>(
    [
      { header: 'Workspace', text: (s) => s.grantee_id, sticky: true },
      {
        header: '',
        text: (s) => (actions.isPending(s.grantee_id) ? '…' : actions.isConfirming(s.grantee_id) ? 'Confirm stop' : 'Stop sharing'),
        cellClass: (s) => (actions.isConfirming(s.grantee_id) ? 'confirm' : ''),
        title: () => 'Its playback URLs naming your workspace in coid answer 102 again',
        action: {
          run: (s) => void actions.run(s.grantee_id, () => ctx.api.unshare(s.grantee_id), `Could not stop sharing with ${s.grantee_id}: `, true),
          disabled: (s) => actions.isPending(s.grantee_id),
        },
      },
      { header: 'Shared since', text: (s) => utcTime(s.created_at), sortValue: (s) => s.created_at },
    ],
    (s) => s.grantee_id,
    'Workspaces your content is shared with',
    { sortable: true },
  );
  table.element.id = 'shares';
  const empty = h('p', { class: 'muted', id: 'shares-empty', hidden: true }, 'Your content is shared with no workspace: only your own URLs play it.');

  const grantee = h('input', { type: 'text', id: 'share-grantee', maxlength: 64, placeholder: 'workspace id', autocomplete: 'off', required: true, size: 36 });
  const add = h('button', { type: 'submit', class: 'primary', id: 'share-add' }, 'Share');
  const addProblem = new ProblemLine();
  const added = h('p', { class: 'muted', id: 'share-added', hidden: true, role: 'status' });
  const form = h('form', { class: 'inline-form', id: 'share-form' },
    h('div', { class: 'field' }, h('label', { for: 'share-grantee' }, 'Workspace'), grantee),
    h('div', { class: 'field actions' }, add),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    added.hidden = true;
    const id = grantee.value.trim();
    if (!WORKSPACE_ID.test(id)) {
      addProblem.show(new Error('a workspace id is 1-64 of A-Z a-z 0-9 _ -'), 'Could not share: ');
      return;
    }
    add.disabled = true;
    ctx.api.share(id).then(
      (share) => {
        addProblem.clear();
        setText(added, `Shared with ${share.grantee_id}: its URLs with coid=${share.workspace_id} play your assets and live events.`);
        added.hidden = false;
        grantee.value = '';
      },
      (err: unknown) => addProblem.show(err, 'Could not share: '),
    ).finally(() => {
      add.disabled = false;
      void poller.refreshNow();
    });
  });

  const element = h(
    'div',
    { class: 'view', id: 'view-shares' },
    section('Share your content',
      h('p', { class: 'muted' },
        'Your assets and live events are private to your workspace. A workspace you share with plays them with its own signed URLs naming yours in coid; ',
        'any other gets playback error 102. An asset with a private-asset entry plays only for the workspaces that entry lists.'),
      form, addProblem.element, added),
    section('Shared with', problem.element, actionProblem.element, empty, scroller(table.element)),
  );

  const poller = new Poller(async () => {
    try {
      shares = (await ctx.api.shares()).items;
      problem.clear();
      empty.hidden = shares.length > 0;
      table.update(shares);
    } catch (err) {
      problem.show(err, isMissingRoute(err) ? 'This server does not offer sharing: ' : 'Could not load the shares: ');
    }
  }, Math.max(ctx.intervalMs, 5000));

  return {
    element,
    show: () => poller.start(),
    hide: () => {
      poller.stop();
      actions.clearConfirming();
    },
  };
}
