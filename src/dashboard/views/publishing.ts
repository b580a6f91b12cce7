import type { PlatformName, TargetProtocol } from '../../modules/syndication/syndication.schema.js';
import type { NewTarget, Schedule, Target, TargetPatch } from '../api/types.js';
import { h, setText } from '../dom.js';
import { isMissingRoute } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import { Poller } from '../poller.js';
import { FilterBox, ProblemLine, RowActions, scroller, section, showFieldErrors } from './parts.js';
import type { View, ViewContext } from './view.js';

const statusClass = (status: string): string => `badge status-${status}`;
/** A schedule's content in words: the slicer's name when the workspace has it, else the id. */
const contentLabel = (s: Schedule, names: ReadonlyMap<string, string>): string => {
  const name = names.get(s.content_id);
  return `${s.content_type === 'e' ? 'live event' : 'live channel'} ${name ? `${name} (${s.content_id})` : s.content_id}`;
};

// Every value the API accepts (the Record types make the compiler check none is missing).
const platforms: Record<PlatformName, string> = {
  Facebook: 'Facebook', YouTube: 'YouTube', TikTok: 'TikTok', Twitch: 'Twitch',
  'AWS Elemental MediaConnect': 'AWS Elemental MediaConnect', 'Pluto TV': 'Pluto TV', Custom: 'Custom',
};
const protocols: Record<TargetProtocol, string> = {
  rtmp: 'rtmp', rtmps: 'rtmps', hls: 'hls (pull)', 'hls-push': 'hls-push', zixi: 'zixi', srt: 'srt', rist: 'rist',
};
/** The protocol a platform uses (Custom: any). */
const protocolOf: Partial<Record<PlatformName, TargetProtocol>> = {
  Facebook: 'rtmp', YouTube: 'rtmp', TikTok: 'rtmp', Twitch: 'rtmp', 'AWS Elemental MediaConnect': 'zixi', 'Pluto TV': 'zixi',
};
const MASK = '********';

const options = (labels: Record<string, string>) => Object.entries(labels).map(([value, label]) => h('option', { value }, label));

/** The target form's platform_config inputs, by key. */
const configFields = [
  { key: 'host', label: 'Host (zixi)', type: 'text' },
  { key: 'port', label: 'Port (zixi)', type: 'number' },
  { key: 'stream_id', label: 'Stream ID (zixi)', type: 'password' },
  { key: 'password', label: 'Password (zixi)', type: 'password' },
  { key: 'page_id', label: 'Facebook page ID (integrated)', type: 'text' },
  { key: 'clipping_profile_id', label: 'Clipping profile ID (integrated)', type: 'text' },
] as const;

/**
 * Publishing: targets (create, edit with the API's rule errors next to their fields) with their
 * derived status, and the schedules that use them (create, start/stop).
 */
export function publishingView(ctx: ViewContext): View {
  const slicerNames = new Map<string, string>();
  const contentOf = (s: Schedule): string => contentLabel(s, slicerNames);
  let targetsById = new Map<string, Target>();
  let lastTargets: Target[] = [];
  /** The Edit buttons say which target the form edits. */
  const redrawTargets = (): void => targets.update(lastTargets);
  let schedulesByTarget = new Map<string, number>();
  const problem = new ProblemLine();
  const actionProblem = new ProblemLine();

  // ---- the target form: create, or edit the target chosen in the table ----
  let editing: Target | null = null;
  const fieldErrors = new Map<string, HTMLElement>();
  const errorLine = (path: string) => {
    const line = h('span', { class: 'field-error', 'data-error-for': path, hidden: true });
    fieldErrors.set(path, line);
    return line;
  };
  const field = (label: string, input: HTMLElement, path: string, hint?: string) =>
    h('div', { class: 'field' }, h('label', { for: input.id }, label), input, hint ? h('span', { class: 'hint' }, hint) : null, errorLine(path));
  const description = h('input', { type: 'text', id: 'target-description', maxlength: 1024, autocomplete: 'off' });
  const platform = h('select', { id: 'target-platform' }, ...options(platforms));
  const protocol = h('select', { id: 'target-protocol' }, ...options(protocols));
  const stream = h('input', { type: 'text', id: 'target-stream', maxlength: 2048, autocomplete: 'off', spellcheck: 'false' });
  const integrated = h('input', { type: 'checkbox', id: 'target-integrated' });
  const config = new Map<string, HTMLInputElement>(configFields.map((f) => [f.key, h('input', { type: f.type, id: `target-${f.key.replace(/_/g, '-')}`, autocomplete: 'off' })]));
  const formTitle = h('h3', { id: 'target-form-title' }, 'New target');
  const save = h('button', { type: 'submit', class: 'primary', id: 'target-save' }, 'Create target');
  const cancel = h('button', { type: 'button', id: 'target-cancel', hidden: true }, 'Cancel edit');
  const formProblem = new ProblemLine();
  const formOutcome = h('p', { class: 'result ok', id: 'target-outcome', hidden: true, role: 'status' });
  const streamField = field('Stream key or URL', stream, '/target_stream', 'Custom: rtmp[s]://host/app/key, srt://host:port, rist://host:even-port, https://…/ for hls-push');
  const integratedField = h('div', { class: 'field' }, h('label', { class: 'inline', for: 'target-integrated' }, integrated, 'Integrated (Facebook, YouTube)'), errorLine('/platform_config/integrated'));
  const configDivs = new Map(configFields.map((f) => [f.key as string, field(f.label, config.get(f.key) as HTMLInputElement, `/platform_config/${f.key}`)]));
  /** Only the fields of the chosen kind show (the API refuses keys that do not belong to it). */
  const showKindFields = (): void => {
    const kind = platform.value;
    const zixi = protocol.value === 'zixi';
    const social = kind === 'Facebook' || kind === 'YouTube';
    streamField.hidden = zixi || protocol.value === 'hls';
    integratedField.hidden = !social;
    for (const [key, div] of configDivs) {
      div.hidden = ['host', 'port', 'stream_id', 'password'].includes(key) ? !zixi : key === 'page_id' ? kind !== 'Facebook' : !social;
    }
  };
  const targetForm = h('form', { class: 'inline-form', id: 'target-form' },
    formTitle,
    field('Description', description, '/description'),
    field('Platform', platform, '/platform'),
    field('Protocol', protocol, '/target_protocol'),
    streamField,
    integratedField,
    ...configDivs.values(),
    h('div', { class: 'field' }, errorLine('/platform_config')),
    h('div', { class: 'field actions' }, save, cancel),
  );
  platform.addEventListener('change', () => {
    const fixed = protocolOf[platform.value as PlatformName];
    if (fixed) protocol.value = fixed;
    showKindFields();
  });
  protocol.addEventListener('change', showKindFields);
  showKindFields();

  const resetForm = (): void => {
    editing = null;
    targetForm.reset();
    setText(formTitle, 'New target');
    setText(save, 'Create target');
    stream.placeholder = '';
    cancel.hidden = true;
    showFieldErrors(null, fieldErrors);
    formProblem.clear();
    showKindFields();
    redrawTargets();
  };
  const edit = (target: Target): void => {
    resetForm();
    editing = target;
    setText(formTitle, `Edit ${target.description || target.id}`);
    setText(save, 'Save changes');
    cancel.hidden = false;
    formOutcome.hidden = true;
    description.value = target.description;
    platform.value = target.platform;
    protocol.value = target.target_protocol;
    // Secrets come back masked: the mask keeps the stored value unless a new one is typed.
    stream.value = target.target_stream === MASK ? MASK : '';
    const pc = target.platform_config as Record<string, unknown>;
    integrated.checked = pc.integrated === true;
    for (const [key, input] of config) input.value = pc[key] === undefined || pc[key] === '' ? '' : String(pc[key]);
    showKindFields();
    redrawTargets();
    targetForm.scrollIntoView({ block: 'nearest' });
    description.focus();
  };
  cancel.addEventListener('click', resetForm);

  const platformConfig = (): Record<string, string | number | boolean | null> => {
    const out: Record<string, string | number | boolean | null> = {};
    const kind = platform.value;
    if (kind === 'Facebook' || kind === 'YouTube') out.integrated = integrated.checked;
    for (const [key, input] of config) {
      if (configDivs.get(key)?.hidden) continue;
      const value = input.value.trim();
      if (value === '') {
        // Editing: a field emptied by the user removes the key (PATCH merges, null removes).
        const before = editing ? (editing.platform_config as Record<string, unknown>)[key] : undefined;
        if (editing && before !== undefined && before !== '') out[key] = null;
        continue;
      }
      out[key] = key === 'port' && /^\d+$/.test(value) ? Number(value) : value;
    }
    return out;
  };

  targetForm.addEventListener('submit', (event) => {
    event.preventDefault();
    save.disabled = true;
    formOutcome.hidden = true;
    const pc = platformConfig();
    const streamValue = streamField.hidden ? '' : stream.value.trim();
    let request: Promise<Target>;
    if (editing) {
      const body: TargetPatch = {
        description: description.value.trim() || null,
        platform: platform.value as PlatformName,
        target_protocol: protocol.value as TargetProtocol,
        ...(streamValue !== '' ? { target_stream: streamValue } : {}),
        ...(Object.keys(pc).length > 0 ? { platform_config: pc as TargetPatch['platform_config'] } : {}),
      };
      request = ctx.api.patchTarget(editing.id, body);
    } else {
      const createConfig = Object.fromEntries(Object.entries(pc).filter(([, v]) => v !== null));
      const body: NewTarget = {
        ...(description.value.trim() ? { description: description.value.trim() } : {}),
        platform: platform.value as PlatformName,
        target_protocol: protocol.value as TargetProtocol,
        ...(streamValue !== '' ? { target_stream: streamValue } : {}),
        ...(Object.keys(createConfig).length > 0 ? { platform_config: createConfig as NewTarget['platform_config'] } : {}),
      };
      request = ctx.api.createTarget(body);
    }
    const wasEditing = editing !== null;
    request.then(
      (target) => {
        resetForm();
        setText(formOutcome, `${wasEditing ? 'Saved' : 'Created'}: ${target.description || target.id} (${target.platform}, ${target.target_protocol}).`);
        formOutcome.hidden = false;
      },
      (err: unknown) => {
        const rest = showFieldErrors(err, fieldErrors);
        formProblem.show(err, `Not ${wasEditing ? 'saved' : 'created'}${rest.length > 0 ? ` (${rest.join('; ')})` : ''}: `);
      },
    ).finally(() => {
      save.disabled = false;
      void poller.refreshNow();
    });
  });

  const targets = new KeyedTable<Target>(
    [
      { header: 'Target', text: (t) => t.description || t.id, sticky: true },
      { header: '', text: (t) => (editing?.id === t.id ? 'Editing' : 'Edit'), action: { run: (t) => edit(t) } },
      { header: 'Platform', text: (t) => t.platform },
      { header: 'Protocol', text: (t) => t.target_protocol },
      { header: 'Status', text: (t) => t.status, cellClass: (t) => statusClass(t.status) },
      { header: 'Schedules', text: (t) => String(schedulesByTarget.get(t.id) ?? 0), numeric: true, sortValue: (t) => schedulesByTarget.get(t.id) ?? 0 },
    ],
    (t) => t.id,
    'Publishing targets',
    { sortable: true },
  );
  targets.element.id = 'targets';
  const noTargets = h('p', { class: 'empty' }, 'No publishing targets yet: create one above, then a schedule that publishes a live event or channel to it.');

  // ---- schedules: create, start/stop ----
  const actions = new RowActions({ problem: actionProblem, redraw: () => schedules.update(lastSchedules), refresh: () => poller.refreshNow() });
  const act = (schedule: Schedule): Promise<void> => {
    const mode = schedule.status === 'active' ? 'stop' : 'start';
    return actions.run(schedule.id, () => ctx.api.scheduleAction(schedule.id, mode), `Could not ${mode} the schedule for ${contentOf(schedule)}: `);
  };

  let lastSchedules: Schedule[] = [];
  let editingSchedule: Schedule | null = null;
  const schedules = new KeyedTable<Schedule>(
    [
      { header: 'Target', text: (s) => targetsById.get(s.syndication_target_id)?.description || s.syndication_target_id, sticky: true },
      {
        header: 'Action',
        text: (s) => (actions.isPending(s.id) ? '…' : s.status === 'active' ? 'Stop' : 'Start'),
        action: { run: (s) => void act(s), disabled: (s) => actions.isPending(s.id) },
      },
      {
        header: '',
        text: (s) => (editingSchedule?.id === s.id ? 'Editing' : 'Edit'),
        title: (s) => (s.status === 'active' ? 'Stop the schedule to edit it' : 'Edit the schedule in the form above'),
        action: { run: (s) => editSchedule(s), disabled: (s) => s.status === 'active' || actions.isPending(s.id) },
      },
      { header: 'Content', text: contentOf },
      { header: 'Region', text: (s) => s.region },
      { header: 'Status', text: (s) => s.status, cellClass: (s) => statusClass(s.status) },
      { header: 'Error', text: (s) => s.error ?? '', wrap: true, optional: true },
    ],
    (s) => s.id,
    'Publishing schedules',
    { sortable: true },
  );
  schedules.element.id = 'schedules';
  const noSchedules = h('p', { class: 'empty' }, 'No schedules yet. A schedule publishes a live event or channel to a target: create one above.');
  const scheduleFilter = new FilterBox('schedule-filter', 'Filter by content id', (text) => {
    const t = text.toLowerCase();
    schedules.setFilter(t === '' ? null : (s) => s.content_id.toLowerCase().includes(t));
  });

  const scheduleErrors = new Map<string, HTMLElement>();
  const scheduleField = (label: string, input: HTMLElement, path: string) => {
    const line = h('span', { class: 'field-error', 'data-error-for': path, hidden: true });
    scheduleErrors.set(path, line);
    return h('div', { class: 'field' }, h('label', { for: input.id }, label), input, line);
  };
  const scheduleTarget = h('select', { id: 'schedule-target' });
  // The workspace's slicers to pick from (a live event is published by its slicer id); any id may still be typed.
  const contentChoices = h('datalist', { id: 'schedule-content-choices' });
  const contentId = h('input', { type: 'text', id: 'schedule-content', maxlength: 64, autocomplete: 'off', placeholder: 'pick a slicer or type an id', list: 'schedule-content-choices' });
  const contentName = h('span', { class: 'hint', id: 'schedule-content-name' });
  const nameContent = (): void => setText(contentName, slicerNames.get(contentId.value.trim()) ?? (contentId.value.trim() === '' ? '' : 'not a slicer of this workspace'));
  contentId.addEventListener('input', nameContent);
  const contentType = h('select', { id: 'schedule-content-type' }, h('option', { value: 'e' }, 'live event'), h('option', { value: 'c' }, 'live channel'));
  const region = h('select', { id: 'schedule-region' });
  const scheduleCreate = h('button', { type: 'submit', class: 'primary', id: 'schedule-create' }, 'Create schedule');
  const scheduleCancel = h('button', { type: 'button', id: 'schedule-cancel', hidden: true }, 'Cancel edit');
  const scheduleTitle = h('h3', { id: 'schedule-form-title' }, 'New schedule');
  const scheduleProblem = new ProblemLine();
  const scheduleForm = h('form', { class: 'inline-form', id: 'schedule-form' },
    scheduleTitle,
    scheduleField('Target', scheduleTarget, '/syndication_target_id'),
    scheduleField('Content (slicer)', h('span', { class: 'picker' }, contentId, contentChoices, contentName), '/content_id'),
    scheduleField('Content type', contentType, '/content_type'),
    scheduleField('Region', region, '/region'),
    h('div', { class: 'field actions' }, scheduleCreate, scheduleCancel),
  );
  const resetScheduleForm = (): void => {
    editingSchedule = null;
    contentId.value = '';
    setText(scheduleTitle, 'New schedule');
    setText(scheduleCreate, 'Create schedule');
    scheduleCancel.hidden = true;
    showFieldErrors(null, scheduleErrors);
    scheduleProblem.clear();
    schedules.update(lastSchedules);
  };
  const editSchedule = (schedule: Schedule): void => {
    resetScheduleForm();
    editingSchedule = schedule;
    setText(scheduleTitle, `Edit the schedule of ${contentOf(schedule)}`);
    setText(scheduleCreate, 'Save schedule');
    scheduleCancel.hidden = false;
    scheduleTarget.value = schedule.syndication_target_id;
    contentId.value = schedule.content_id;
    contentType.value = schedule.content_type;
    region.value = schedule.region;
    schedules.update(lastSchedules);
    scheduleForm.scrollIntoView({ block: 'nearest' });
  };
  scheduleCancel.addEventListener('click', resetScheduleForm);
  scheduleForm.addEventListener('submit', (event) => {
    event.preventDefault();
    scheduleCreate.disabled = true;
    const body = { syndication_target_id: scheduleTarget.value, content_id: contentId.value.trim(), content_type: contentType.value === 'c' ? 'c' as const : 'e' as const, region: region.value };
    const editing = editingSchedule;
    (editing ? ctx.api.patchSchedule(editing.id, body) : ctx.api.createSchedule(body)).then(
      () => resetScheduleForm(),
      (err: unknown) => {
        const rest = showFieldErrors(err, scheduleErrors);
        scheduleProblem.show(err, `Not ${editing ? 'saved' : 'created'}${rest.length > 0 ? ` (${rest.join('; ')})` : ''}: `);
      },
    ).finally(() => {
      scheduleCreate.disabled = false;
      void poller.refreshNow();
    });
  });

  const element = h(
    'div',
    { class: 'view', id: 'view-publishing' },
    section('Publishing targets', h('p', { class: 'muted' }, 'A target is active while one of its schedules publishes, error when one failed, stopped otherwise. Secrets are shown masked; leave the mask to keep them.'), problem.element, targetForm, formProblem.element, formOutcome, noTargets, scroller(targets.element)),
    section('Schedules', scheduleForm, scheduleProblem.element, actionProblem.element, noSchedules, h('div', { class: 'table-tools' }, scheduleFilter.element), scroller(schedules.element)),
  );

  let regionsLoaded = false;
  const poller = new Poller(async () => {
    if (!regionsLoaded) {
      try {
        const list = await ctx.api.regions();
        region.replaceChildren(...list.items.map((r) => h('option', { value: r.id }, r.name === r.id ? r.id : `${r.name} (${r.id})`)));
        regionsLoaded = true;
      } catch {
        // Shown by the problem line of the lists below if publishing is missing altogether.
      }
    }
    const [targetList, scheduleList, slicerList] = await Promise.allSettled([ctx.api.targets(), ctx.api.schedules(), ctx.api.slicers()]);
    if (slicerList.status === 'fulfilled') {
      const items = slicerList.value.items.filter((sl) => sl.state !== 'deleted' && sl.state !== 'deleting');
      const changed = items.length !== slicerNames.size || items.some((sl) => slicerNames.get(sl.id) !== sl.name);
      if (changed) {
        slicerNames.clear();
        for (const sl of items) slicerNames.set(sl.id, sl.name);
        contentChoices.replaceChildren(...items.map((sl) => h('option', { value: sl.id, label: `${sl.name} (${sl.ingest_protocol.toUpperCase()})` })));
        nameContent();
      }
    }
    const failure = targetList.status === 'rejected' ? targetList.reason : scheduleList.status === 'rejected' ? scheduleList.reason : null;
    problem.show(failure, isMissingRoute(failure) ? 'This server does not offer publishing targets yet: ' : 'Could not load publishing: ');
    if (targetList.status === 'fulfilled') {
      targetsById = new Map(targetList.value.items.map((t) => [t.id, t]));
      const chosen = scheduleTarget.value;
      const choices = targetList.value.items.map((t) => [t.id, `${t.description || t.id} (${t.platform})`] as const);
      const current = [...scheduleTarget.options].map((o) => `${o.value}=${o.text}`).join('|');
      if (current !== choices.map(([id, label]) => `${id}=${label}`).join('|')) {
        scheduleTarget.replaceChildren(...choices.map(([id, label]) => h('option', { value: id }, label)));
        if (targetsById.has(chosen)) scheduleTarget.value = chosen;
      }
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
      lastTargets = targetList.value.items;
      targets.update(lastTargets);
      targets.element.hidden = targets.size === 0;
      noTargets.hidden = targets.size > 0;
    }
  }, Math.max(ctx.intervalMs, 3000));

  return { element, show: () => poller.start(), hide: () => poller.stop() };
}
