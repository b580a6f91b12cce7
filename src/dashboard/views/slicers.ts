import type { IngestProtocol, OutputProfile } from '../../modules/managed-slicers/managed-slicers.schema.js';
import type { Asset, Slicer, SlicerTask } from '../api/types.js';
import { h, setText } from '../dom.js';
import { duration, isMissingRoute, utcTime } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import { Poller } from '../poller.js';
import { FilterBox, ProblemLine, RowActions, scroller, section, showFieldErrors } from './parts.js';
import { AssetPlayer } from './player.js';
import { IngestCell } from './ingest-cell.js';
import { ingestParts } from '../ingest-parts.js';
import type { View, ViewContext } from './view.js';

// Labels for every value the API accepts (the Record types make the compiler check none is missing).
const ingestProtocols: Record<IngestProtocol, string> = { rtmp: 'RTMP', srt: 'SRT', rist: 'RIST', zixi: 'Zixi', hls: 'HLS (push)' };
const outputProfiles: Record<OutputProfile, string> = { 'sd-480p': 'SD 480p', 'hd-720p': 'HD 720p', 'hd-1080p': 'HD 1080p', 'uhd-2160p': 'UHD 2160p', 'audio-only': 'Audio only', passthrough: 'Passthrough' };

/** How long ago, in whole seconds, or a dash. */
const ago = (unixMs: number | null | undefined): string => {
  if (unixMs === null || unixMs === undefined) return '—';
  const s = Math.max(0, Math.round((Date.now() - unixMs) / 1000));
  return `${s} s ago`;
};

/** The live state and input health of a slicer, in one line. */
const liveLine = (s: Slicer): string => {
  const live = s.live;
  if (!live) return `${s.state}: no live status yet`;
  const input = live.input_bitrate_kbps ? `input ${live.input_bitrate_kbps} kbit/s, last frame ${ago(live.last_frame_at)}` : 'no input';
  return `${live.state} · ${input}${live.failure_reason ? ` · ${live.failure_reason}` : ''}`;
};

const options = (labels: Record<string, string>) => Object.entries(labels).map(([value, label]) => h('option', { value }, label));

/** Managed slicers (create, restart, rotate the stream key, delete) and their tasks, newest first, with their state. */
export function slicersView(ctx: ViewContext): View {
  const problem = new ProblemLine();
  const slicerSummary = h('p', { class: 'muted' });
  const actionProblem = new ProblemLine();
  let slicers: Slicer[] = [];
  /** Names of the slicers seen since the page opened: tasks of a deleted slicer keep its name. */
  const names = new Map<string, string>();
  /** Delete takes a second click; Restart does not. */
  const actions = new RowActions({ problem: actionProblem, redraw: () => table.update(slicers), refresh: () => poller.refreshNow() });
  const act = (slicer: Slicer, what: 'restart' | 'delete'): Promise<void> =>
    actions.run(slicer.id, () => (what === 'restart' ? ctx.api.restartSlicer(slicer.id) : ctx.api.deleteSlicer(slicer.id)), `Could not ${what} ${slicer.name}: `, what === 'delete');
  // Rotation has its own second click (a pending "Confirm delete" of the same row is another question).
  const rotations = new RowActions({ problem: actionProblem, redraw: () => table.update(slicers), refresh: () => poller.refreshNow() });
  const busy = (s: Slicer): boolean => actions.isPending(s.id) || rotations.isPending(s.id) || s.state === 'deleting' || s.state === 'deleted';

  // The new ingest URL after a rotation: the encoder must be pointed at it (the table shows it too).
  const rotatedUrl = h('code', { id: 'slicer-rotated-url' });
  const rotatedFor = h('p', { class: 'muted', id: 'slicer-rotated-for' });
  const rotatedBox = h('div', { class: 'secret-once', id: 'slicer-rotated', hidden: true, role: 'status' },
    h('strong', {}, 'New stream key: point the encoder at this ingest URL.'),
    h('div', { class: 'secret-row' }, rotatedUrl),
    rotatedFor,
  );
  const rotate = (slicer: Slicer): Promise<void> =>
    rotations.run(slicer.id, async () => {
      const rotated = await ctx.api.rotateSlicerKey(slicer.id);
      setText(rotatedUrl, rotated.ingest_url ?? 'none yet: the slicer shows it once its CREATE task completed');
      setText(rotatedFor, `${rotated.name}: the slicer restarts with the new key, which disconnects an encoder that uses the old one.`);
      rotatedBox.hidden = false;
    }, `Could not rotate the stream key of ${slicer.name}: `, true);

  // The live preview: one slicer's live output played in the page (a playback URL it signs), with its input health.
  const preview = new AssetPlayer(ctx.api, { kind: 'event', idPrefix: 'slicer-preview' });
  const previewName = h('h3', { id: 'slicer-preview-name' });
  const previewLive = h('p', { id: 'slicer-preview-live', role: 'status' });
  const previewClose = h('button', { type: 'button', id: 'slicer-preview-close' }, 'Close preview');
  const previewSection = section('Live preview', h('div', { class: 'row player-head' }, previewName, previewClose), previewLive, preview.element);
  previewSection.id = 'slicer-preview';
  previewSection.hidden = true;
  const closePreview = (): void => {
    preview.stop();
    preview.load(undefined);
    previewSection.hidden = true;
  };
  previewClose.addEventListener('click', () => {
    closePreview();
    table.update(slicers);
  });
  const showPreviewOf = (s: Slicer): void => {
    setText(previewName, s.name);
    setText(previewLive, liveLine(s));
    previewLive.className = `badge live-${s.live?.state ?? 'unknown'}`;
  };
  const togglePreview = (s: Slicer): void => {
    if (preview.current === s.id) {
      closePreview();
    } else {
      preview.load(s.id);
      showPreviewOf(s);
      previewSection.hidden = false;
      previewSection.scrollIntoView({ block: 'nearest' });
      void preview.play();
    }
    table.update(slicers);
  };
  // The recordings of one slicer (its live events kept in the library), listed on demand, played here.
  let recordingsOf: Slicer | undefined;
  let recordings: Asset[] = [];
  const recordingPlayer = new AssetPlayer(ctx.api, { idPrefix: 'slicer-recording-player' });
  const recordingsTitle = h('h3', { id: 'slicer-recordings-name' });
  const recordingsNote = h('p', { class: 'muted', id: 'slicer-recordings-note', role: 'status' });
  const recordingsClose = h('button', { type: 'button', id: 'slicer-recordings-close' }, 'Close');
  const recordingsTable = new KeyedTable<Asset>(
    [
      { header: 'Recording', text: (a) => a.title ?? a.id, href: (a) => `#asset/${encodeURIComponent(a.id)}`, title: (a) => `Asset ${a.id}`, wrap: true },
      { header: 'State', text: (a) => a.state, cellClass: (a) => `badge asset-state asset-${a.state}` },
      { header: 'Started', text: (a) => (a.recording_started_at === null ? '—' : utcTime(a.recording_started_at * 1000)), sortValue: (a) => a.recording_started_at ?? 0 },
      { header: 'Ended', text: (a) => (a.recording_ended_at === null ? '—' : utcTime(a.recording_ended_at * 1000)), optional: true },
      { header: 'Duration', text: (a) => duration(a.duration_s), numeric: true, sortValue: (a) => a.duration_s ?? 0 },
      {
        header: '',
        text: () => '',
        actions: [
          {
            label: (a) => (recordingPlayer.current === a.id ? 'Stop' : 'Play'),
            title: 'Play the recording here (a playback URL signed in the page)',
            run: (a) => {
              if (recordingPlayer.current === a.id) {
                recordingPlayer.stop();
                recordingPlayer.load(undefined);
              } else {
                recordingPlayer.load(a.id);
                void recordingPlayer.play();
              }
              recordingsTable.update(recordings);
            },
            disabled: (a) => a.state !== 'ready',
          },
        ],
      },
    ],
    (a) => a.id,
    'Recordings',
    { sortable: true },
  );
  recordingsTable.element.id = 'slicer-recordings-table';
  const recordingsSection = section('Recordings', h('div', { class: 'row player-head' }, recordingsTitle, recordingsClose), recordingsNote, scroller(recordingsTable.element), recordingPlayer.element);
  recordingsSection.id = 'slicer-recordings';
  recordingsSection.hidden = true;
  const closeRecordings = (): void => {
    recordingPlayer.stop();
    recordingPlayer.load(undefined);
    recordingsOf = undefined;
    recordingsSection.hidden = true;
  };
  recordingsClose.addEventListener('click', () => {
    closeRecordings();
    table.update(slicers);
  });
  const loadRecordings = async (): Promise<void> => {
    const of = recordingsOf;
    if (!of) return;
    const list = await ctx.api.recordings(of.id);
    if (recordingsOf?.id !== of.id) return;
    recordings = list.items;
    recordingsTable.update(recordings);
    recordingsTable.element.hidden = recordings.length === 0;
    const current = slicers.find((s) => s.id === of.id) ?? of;
    const state = current.live?.recording;
    const now = state?.state === 'recording' ? 'Recording the event under way. ' : state?.state === 'stopped' || state?.state === 'unavailable' ? `Not recording: ${state.reason}. ` : '';
    setText(recordingsNote, `${now}${recordings.length === 0 ? (current.record ? 'No recording yet: each live event becomes one when it ends.' : 'Recording is off for this slicer.') : `${list.total_items} recording${list.total_items === 1 ? '' : 's'}.`}`);
  };
  const toggleRecordings = (s: Slicer): void => {
    if (recordingsOf?.id === s.id) {
      closeRecordings();
    } else {
      closeRecordings();
      recordingsOf = s;
      setText(recordingsTitle, s.name);
      setText(recordingsNote, 'Loading…');
      recordingsSection.hidden = false;
      recordingsSection.scrollIntoView({ block: 'nearest' });
      loadRecordings().catch((err: unknown) => setText(recordingsNote, `Could not load the recordings: ${err instanceof Error ? err.message : String(err)}`));
    }
    table.update(slicers);
  };

  /** A preview needs media: the slicer live (or, with a preview open, whatever it is now). */
  const canPreview = (s: Slicer): boolean => preview.current === s.id || (s.live?.state === 'live' && !busy(s));

  const ingestCell = new IngestCell();
  const table = new KeyedTable<Slicer>(
    [
      { header: 'Name', text: (s) => s.name, sticky: true },
      {
        header: '',
        text: () => '',
        // Beside the name (which stays in view while the table scrolls), stacked in one column.
        actions: [
          {
            label: (s) => (preview.current === s.id ? 'Stop preview' : 'Preview'),
            title: 'Play the live output here (a playback URL signed in the page)',
            run: (s) => togglePreview(s),
            disabled: (s) => !canPreview(s),
          },
          {
            label: () => 'Recordings',
            title: 'Its live events kept in the library (again: hide them)',
            className: (s) => (recordingsOf?.id === s.id ? 'active' : ''),
            run: (s) => toggleRecordings(s),
          },
          { label: (s) => (actions.isPending(s.id) ? '…' : 'Restart'), run: (s) => void act(s, 'restart'), disabled: busy },
          {
            label: (s) => (rotations.isPending(s.id) ? '…' : rotations.isConfirming(s.id) ? 'Confirm rotate' : 'Rotate stream key'),
            title: 'A new stream key in the ingest URL; an encoder using the old one is disconnected',
            className: (s) => (rotations.isConfirming(s.id) ? 'confirm' : ''),
            run: (s) => void rotate(s),
            disabled: busy,
          },
          {
            label: (s) => (actions.isConfirming(s.id) ? 'Confirm delete' : 'Delete'),
            className: (s) => (actions.isConfirming(s.id) ? 'confirm' : ''),
            run: (s) => void act(s, 'delete'),
            disabled: busy,
          },
        ],
      },
      { header: 'Region', text: (s) => s.region },
      { header: 'Ingest → output', text: (s) => `${ingestProtocols[s.ingest_protocol] ?? s.ingest_protocol} → ${outputProfiles[s.output_profile] ?? s.output_profile}` },
      { header: 'State', text: (s) => s.state, cellClass: (s) => `badge state-${s.state}` },
      {
        header: 'Live',
        // `waiting` for waiting_for_source: the table stays within its card at 1280 px (the title says it whole).
        text: (s) => (s.live?.state === 'waiting_for_source' ? 'waiting' : (s.live?.state ?? '—')),
        title: (s) => `${s.live?.state ?? 'no live status'}: ${s.live?.restarts ?? 0} restart(s) since provisioned`,
        cellClass: (s) => `badge live-${s.live?.state ?? 'unknown'}`,
      },
      {
        header: 'Input',
        text: (s) => (s.live?.input_bitrate_kbps ? `${s.live.input_bitrate_kbps} kbit/s, frame ${ago(s.live.last_frame_at)}` : '—'),
        sortValue: (s) => s.live?.input_bitrate_kbps ?? 0,
        wrap: true,
      },
      { header: 'Last failure', text: (s) => s.live?.failure_reason ?? '', wrap: true, optional: true },
      {
        header: 'Ingest',
        // The text (sorting, filtering) never carries the key; the cell shows it only on Show.
        text: (s) => (s.ingest_url === null ? '—' : ingestParts(s.ingest_protocol, s.ingest_url).masked),
        render: (s, cell) => ingestCell.render(s.ingest_protocol, s.ingest_url, cell),
        wrap: true,
      },
      { header: 'Latest task', text: (s) => `${s.task.operation} ${s.task.state}`, cellClass: (s) => `badge state-${s.task.state.toLowerCase()}` },
    ],
    (s) => s.id,
    'Managed slicers',
    { sortable: true },
  );
  table.element.id = 'slicers';
  const noSlicers = h('p', { class: 'empty' }, 'No slicers yet: create one above. Each change runs as a task, listed below.');
  const filter = new FilterBox('slicer-filter', 'Filter by name or id', (text) => {
    const t = text.toLowerCase();
    table.setFilter(t === '' ? null : (s) => s.name.toLowerCase().includes(t) || s.id.toLowerCase().includes(t));
  });

  // Create.
  const name = h('input', { type: 'text', id: 'slicer-name', maxlength: 100, placeholder: 'Studio A', autocomplete: 'off' });
  const region = h('select', { id: 'slicer-region' });
  const protocol = h('select', { id: 'slicer-protocol' }, ...options(ingestProtocols));
  const profile = h('select', { id: 'slicer-profile' }, ...options(outputProfiles));
  (profile.querySelector('option[value="hd-720p"]') as HTMLOptionElement).selected = true;
  const description = h('input', { type: 'text', id: 'slicer-description', maxlength: 500, autocomplete: 'off' });
  // Empty: the server's default (PLAYLINE_LIVE_DVR_WINDOW_S).
  const dvr = h('input', { type: 'number', id: 'slicer-dvr', min: 0, max: 43200, step: 1, placeholder: 'default', inputmode: 'numeric' });
  const record = h('input', { type: 'checkbox', id: 'slicer-record', checked: true });
  const fieldError = (path: string) => h('span', { class: 'field-error', 'data-error-for': path, hidden: true });
  const fieldErrors = new Map<string, HTMLElement>(['/name', '/region', '/ingest_protocol', '/output_profile', '/dvr_window_s', '/record', '/description'].map((p) => [p, fieldError(p)]));
  const field = (label: string, input: HTMLElement, path: string) =>
    h('div', { class: 'field' }, h('label', { for: input.id }, label), input, fieldErrors.get(path) as HTMLElement);
  const create = h('button', { type: 'submit', class: 'primary', id: 'slicer-create' }, 'Create slicer');
  const createProblem = new ProblemLine();
  const form = h('form', { class: 'inline-form', id: 'slicer-form' },
    field('Name', name, '/name'),
    field('Region', region, '/region'),
    field('Ingest protocol', protocol, '/ingest_protocol'),
    field('Output profile', profile, '/output_profile'),
    field('DVR window (s)', dvr, '/dvr_window_s'),
    field('Record events', record, '/record'),
    field('Description', description, '/description'),
    h('div', { class: 'field actions' }, create),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    create.disabled = true;
    const body = {
      name: name.value.trim(),
      region: region.value,
      ingest_protocol: protocol.value as IngestProtocol,
      output_profile: profile.value as OutputProfile,
      ...(dvr.value.trim() !== '' ? { dvr_window_s: Number(dvr.value) } : {}),
      record: record.checked,
      ...(description.value.trim() ? { description: description.value.trim() } : {}),
    };
    ctx.api.createSlicer(body).then(
      () => {
        showFieldErrors(null, fieldErrors);
        createProblem.clear();
        name.value = '';
        description.value = '';
        dvr.value = '';
      },
      (err: unknown) => {
        const rest = showFieldErrors(err, fieldErrors);
        createProblem.show(err, rest.length > 0 ? `Not created (${rest.join('; ')}): ` : 'Not created: ');
      },
    ).finally(() => {
      create.disabled = false;
      void poller.refreshNow();
    });
  });

  // Tasks.
  const summary = h('p', { class: 'muted' });
  const empty = h('p', { class: 'empty' }, 'No slicer tasks yet. Creating, updating, restarting or deleting a managed slicer starts a task that shows up here.');
  const tasks = new KeyedTable<SlicerTask>(
    [
      { header: 'Started', text: (t) => utcTime(t.timestamp * 1000), sortValue: (t) => t.timestamp },
      { header: 'Operation', text: (t) => t.operation },
      { header: 'State', text: (t) => t.state, cellClass: (t) => `badge state-${t.state.toLowerCase()}` },
      { header: 'Slicer', text: (t) => names.get(t.slicer_id) ?? t.slicer_id },
      { header: 'Task', text: (t) => t.id },
      { header: 'Failure', text: (t) => t.failure_reason ?? '', wrap: true, optional: true },
    ],
    (t) => t.id,
    'Slicer tasks',
    { sortable: true },
  );
  tasks.element.id = 'slicer-tasks';

  const element = h(
    'div',
    { class: 'view', id: 'view-slicers' },
    section('Create a slicer', form, createProblem.element),
    previewSection,
    recordingsSection,
    section('Slicers', slicerSummary, problem.element, actionProblem.element, rotatedBox, noSlicers, h('div', { class: 'table-tools' }, filter.element), scroller(table.element)),
    section('Slicer tasks', summary, empty, scroller(tasks.element)),
  );

  let regionsLoaded = false;
  const poller = new Poller(async () => {
    if (!regionsLoaded) {
      try {
        const list = await ctx.api.regions();
        region.replaceChildren(...list.items.map((r) => h('option', { value: r.id }, r.name === r.id ? r.id : `${r.name} (${r.id})`)));
        regionsLoaded = true;
      } catch {
        // The server without publishing: the region stays a choice the API will check.
      }
    }
    const [slicerList, taskList] = await Promise.allSettled([ctx.api.slicers(), ctx.api.slicerTasks(50)]);
    const failure = slicerList.status === 'rejected' ? slicerList.reason : taskList.status === 'rejected' ? taskList.reason : null;
    problem.show(failure, isMissingRoute(failure) ? 'This server does not offer managed slicers yet: ' : 'Could not load slicers: ');
    if (slicerList.status === 'fulfilled') {
      slicers = slicerList.value.items;
      for (const s of slicers) names.set(s.id, s.name);
      // The previewed slicer's live state and input follow the poll; a deleted one ends its preview.
      const previewed = slicers.find((s) => s.id === preview.current);
      if (previewed && previewed.state !== 'deleted' && previewed.state !== 'deleting') showPreviewOf(previewed);
      else if (preview.current !== undefined) closePreview();
      if (recordingsOf) await loadRecordings().catch(() => undefined);
      table.update(slicers);
      const live = slicers.filter((s) => s.live?.state === 'live').length;
      setText(slicerSummary, `${slicerList.value.total_items} slicer${slicerList.value.total_items === 1 ? '' : 's'}, ${live} live.`);
      table.element.hidden = slicers.length === 0;
      noSlicers.hidden = slicers.length > 0;
    }
    if (taskList.status === 'fulfilled') {
      const page = taskList.value;
      tasks.update(page.items);
      tasks.element.hidden = page.items.length === 0;
      empty.hidden = page.items.length > 0;
      setText(summary, page.total_items > page.items.length ? `The ${page.items.length} newest of ${page.total_items} tasks.` : `${page.total_items} task${page.total_items === 1 ? '' : 's'}.`);
    }
  }, ctx.intervalMs);

  return {
    element,
    show: () => poller.start(),
    hide: () => {
      poller.stop();
      closePreview();
      closeRecordings();
      actions.clearConfirming();
      rotations.clearConfirming();
      // The keyed URL is not left on screen for whoever opens the view next.
      rotatedBox.hidden = true;
      setText(rotatedUrl, '');
    },
  };
}
