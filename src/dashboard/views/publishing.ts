import type { Schedule, Target } from '../api/types.js';
import { h } from '../dom.js';
import { isMissingRoute } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import { Poller } from '../poller.js';
import { ProblemLine, section } from './parts.js';
import type { View, ViewContext } from './view.js';

const statusClass = (status: string): string => `badge status-${status}`;
const contentOf = (s: Schedule): string => `${s.content_type === 'e' ? 'live event' : 'live channel'} ${s.content_id}`;

/** Publishing targets with their derived status, and the schedules that use them (start/stop). */
export function publishingView(ctx: ViewContext): View {
  let targetsById = new Map<string, Target>();
  let schedulesByTarget = new Map<string, number>();
  const pending = new Set<string>();
  const problem = new ProblemLine();
  const actionProblem = new ProblemLine();

  const targets = new KeyedTable<Target>(
    [
      { header: 'Target', text: (t) => t.description || t.id },
      { header: 'Platform', text: (t) => t.platform },
      { header: 'Protocol', text: (t) => t.target_protocol },
      { header: 'Status', text: (t) => t.status, cellClass: (t) => statusClass(t.status) },
      { header: 'Schedules', text: (t) => String(schedulesByTarget.get(t.id) ?? 0), numeric: true },
    ],
    (t) => t.id,
    'Publishing targets',
  );
  targets.element.id = 'targets';
  const noTargets = h('p', { class: 'empty' }, 'No publishing targets yet. Create one with POST /api/v4/syndication-target (platform, target_protocol, target_stream), then a schedule with POST /api/v4/syndication-schedule.');

  const act = async (schedule: Schedule): Promise<void> => {
    const mode = schedule.status === 'active' ? 'stop' : 'start';
    pending.add(schedule.id);
    schedules.update(lastSchedules);
    try {
      await ctx.api.scheduleAction(schedule.id, mode);
      actionProblem.clear();
    } catch (err) {
      actionProblem.show(err, `Could not ${mode} the schedule for ${contentOf(schedule)}: `);
    } finally {
      pending.delete(schedule.id);
      await poller.refreshNow();
    }
  };

  let lastSchedules: Schedule[] = [];
  const schedules = new KeyedTable<Schedule>(
    [
      { header: 'Target', text: (s) => targetsById.get(s.syndication_target_id)?.description || s.syndication_target_id },
      { header: 'Content', text: contentOf },
      { header: 'Region', text: (s) => s.region },
      { header: 'Status', text: (s) => s.status, cellClass: (s) => statusClass(s.status) },
      { header: 'Error', text: (s) => s.error ?? '' },
      {
        header: 'Action',
        text: (s) => (pending.has(s.id) ? '…' : s.status === 'active' ? 'Stop' : 'Start'),
        action: { run: (s) => void act(s), disabled: (s) => pending.has(s.id) },
      },
    ],
    (s) => s.id,
    'Publishing schedules',
  );
  schedules.element.id = 'schedules';
  const noSchedules = h('p', { class: 'empty' }, 'No schedules yet. A schedule publishes a live event or channel to a target: POST /api/v4/syndication-schedule with syndication_target_id, content_id, content_type and region.');

  const element = h(
    'div',
    { class: 'view', id: 'view-publishing' },
    section('Publishing targets', h('p', { class: 'muted' }, 'A target is active while one of its schedules publishes, error when one failed, stopped otherwise.'), problem.element, noTargets, targets.element),
    section('Schedules', actionProblem.element, noSchedules, schedules.element),
  );

  const poller = new Poller(async () => {
    const [targetList, scheduleList] = await Promise.allSettled([ctx.api.targets(), ctx.api.schedules()]);
    const failure = targetList.status === 'rejected' ? targetList.reason : scheduleList.status === 'rejected' ? scheduleList.reason : null;
    problem.show(failure, isMissingRoute(failure) ? 'This server does not offer publishing targets yet: ' : 'Could not load publishing: ');
    if (targetList.status === 'fulfilled') {
      targetsById = new Map(targetList.value.items.map((t) => [t.id, t]));
    }
    if (scheduleList.status === 'fulfilled') {
      lastSchedules = scheduleList.value.items;
      schedulesByTarget = new Map();
      for (const s of lastSchedules) schedulesByTarget.set(s.syndication_target_id, (schedulesByTarget.get(s.syndication_target_id) ?? 0) + 1);
      schedules.update(lastSchedules);
      schedules.element.hidden = lastSchedules.length === 0;
      noSchedules.hidden = lastSchedules.length > 0;
    }
    if (targetList.status === 'fulfilled') {
      targets.update(targetList.value.items);
      targets.element.hidden = targets.size === 0;
      noTargets.hidden = targets.size > 0;
    }
  }, Math.max(ctx.intervalMs, 3000));

  return { element, show: () => poller.start(), hide: () => poller.stop() };
}
