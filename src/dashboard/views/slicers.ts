import type { SlicerTask } from '../api/types.js';
import { h, setText } from '../dom.js';
import { isMissingRoute, utcTime } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import { Poller } from '../poller.js';
import { ProblemLine, section } from './parts.js';
import type { View, ViewContext } from './view.js';

/** Managed slicer tasks, newest first, with their state. */
export function slicersView(ctx: ViewContext): View {
  const problem = new ProblemLine();
  const summary = h('p', { class: 'muted' });
  const empty = h('p', { class: 'empty' }, 'No slicer tasks yet. Creating, updating, restarting or deleting a managed slicer (POST /api/v4/managed-slicer/slicers) starts a task that shows up here.');
  const tasks = new KeyedTable<SlicerTask>(
    [
      { header: 'Started', text: (t) => utcTime(t.timestamp * 1000) },
      { header: 'Operation', text: (t) => t.operation },
      { header: 'State', text: (t) => t.state, cellClass: (t) => `badge state-${t.state.toLowerCase()}` },
      { header: 'Slicer', text: (t) => t.slicer_id },
      { header: 'Task', text: (t) => t.id },
      { header: 'Failure', text: (t) => t.failure_reason ?? '' },
    ],
    (t) => t.id,
    'Slicer tasks',
  );
  tasks.element.id = 'slicer-tasks';

  const element = h('div', { class: 'view', id: 'view-slicers' }, section('Slicer tasks', summary, problem.element, empty, tasks.element));

  const poller = new Poller(async () => {
    try {
      const page = await ctx.api.slicerTasks(50);
      problem.clear();
      tasks.update(page.items);
      tasks.element.hidden = page.items.length === 0;
      empty.hidden = page.items.length > 0;
      setText(summary, page.total_items > page.items.length ? `The ${page.items.length} newest of ${page.total_items} tasks.` : `${page.total_items} task${page.total_items === 1 ? '' : 's'}.`);
    } catch (err) {
      problem.show(err, isMissingRoute(err) ? 'This server does not offer managed slicers yet: ' : 'Could not load slicer tasks: ');
    }
  }, ctx.intervalMs);

  return { element, show: () => poller.start(), hide: () => poller.stop() };
}
