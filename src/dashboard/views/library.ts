import type { Asset } from '../api/types.js';
import { h, setText } from '../dom.js';
import { bytes, duration, isMissingRoute, utcTime } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import { Poller } from '../poller.js';
import { ProblemLine, RowActions, scroller, section } from './parts.js';
import { AssetPlayer } from './player.js';
import type { View, ViewContext } from './view.js';

/** Assets per page of the list. */
const PAGE_SIZE = 20;
const API_PREFIX = '/api/v4';
/** A poster URL is signed again after this long (well within the default 300 s timestamp tolerance). */
const POSTER_RESIGN_MS = 60_000;

/**
 * States the page can play. The API may add states (e.g. `playable`: packaged so far, still
 * packaging); any state string is shown as it comes and styled neutrally unless known.
 */
const PLAYABLE = new Set(['ready', 'playable']);
const KNOWN_STATES = new Set(['uploaded', 'processing', 'playable', 'ready', 'failed']);
/** Still on its way to `ready` (packaging progress shown). */
const packaging = (a: Asset): boolean => a.state !== 'ready' && a.state !== 'failed';
const canPlay = (a: Asset): boolean => PLAYABLE.has(a.state);

const titleOf = (a: Asset): string => a.title ?? '(untitled)';

/** Sets an attribute only when it differs (a steady row costs no DOM write). */
const setAttr = (el: Element, name: string, value: string): void => {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
};

/**
 * The workspace's asset library: upload a file (with its progress), the list newest first with
 * state, packaging progress, duration, renditions and poster, page by page; play and delete.
 */
export function libraryView(ctx: ViewContext): View {
  // Upload.
  const fileInput = h('input', { type: 'file', id: 'library-file', accept: 'video/*,audio/*,.mp4,.mov,.mkv,.webm,.ts,.m4a,.mp3' });
  const titleInput = h('input', { type: 'text', id: 'library-title', maxlength: 200, placeholder: 'the file\'s name', autocomplete: 'off' });
  const uploadButton = h('button', { type: 'submit', class: 'primary', id: 'library-upload' }, 'Upload');
  const cancelButton = h('button', { type: 'button', id: 'library-cancel', hidden: true }, 'Cancel');
  const progress = h('progress', { id: 'library-upload-progress', max: 1, value: 0, hidden: true });
  const progressText = h('span', { class: 'muted', id: 'library-upload-status', role: 'status' });
  const uploadProblem = new ProblemLine();
  uploadProblem.element.id = 'library-upload-problem';
  const form = h('form', { class: 'inline-form', id: 'library-form' },
    h('div', { class: 'field' }, h('label', { for: fileInput.id }, 'Media file'), fileInput),
    h('div', { class: 'field' }, h('label', { for: titleInput.id }, 'Title'), titleInput),
    h('div', { class: 'field actions' }, uploadButton, cancelButton),
  );
  let uploading: AbortController | undefined;
  cancelButton.addEventListener('click', () => uploading?.abort());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const file = fileInput.files?.[0];
    if (!file) {
      uploadProblem.show(new Error('Choose a media file first.'));
      return;
    }
    const title = (titleInput.value.trim() || file.name.trim()).slice(0, 200);
    const controller = new AbortController();
    uploading = controller;
    uploadProblem.clear();
    uploadButton.disabled = true;
    cancelButton.hidden = false;
    progress.hidden = false;
    progress.max = Math.max(file.size, 1);
    progress.value = 0;
    setText(progressText, `Uploading ${file.name}: 0 of ${bytes(file.size)}…`);
    ctx.api.uploadAsset(file, {
      ...(title ? { title } : {}),
      signal: controller.signal,
      onProgress: (sent, total) => {
        progress.max = Math.max(total, 1);
        progress.value = sent;
        setText(progressText, `Uploading ${file.name}: ${bytes(sent)} of ${bytes(total)} (${Math.floor((100 * sent) / Math.max(total, 1))} %)`);
      },
    }).then(
      (asset) => {
        progress.value = progress.max;
        setText(progressText, `Uploaded ${titleOf(asset)} (${bytes(asset.size_bytes)}): it is ${asset.state}; packaging shows in the list below.`);
        form.reset();
        // The new asset is the newest: show the first page.
        pages = [undefined];
      },
      (err: unknown) => {
        progress.hidden = true;
        setText(progressText, '');
        uploadProblem.show(err, `Not uploaded (${file.name}): `);
      },
    ).finally(() => {
      if (uploading === controller) uploading = undefined;
      uploadButton.disabled = false;
      cancelButton.hidden = true;
      void poller.refreshNow();
    });
  });

  // The player of the asset chosen with Play.
  const player = new AssetPlayer(ctx.api, { idPrefix: 'library-player' });
  const playerTitle = h('h3', { id: 'library-player-title' });
  const statsLink = h('a', { id: 'library-player-stats' }, 'Statistics of this asset →');
  const closePlayer = h('button', { type: 'button', id: 'library-player-close' }, 'Close');
  const playerSection = section('Player', h('div', { class: 'row player-head' }, playerTitle, closePlayer), player.element, h('p', {}, statsLink));
  playerSection.id = 'library-player-panel';
  playerSection.hidden = true;
  const stopPlayer = () => {
    player.stop();
    player.load(undefined);
    playerSection.hidden = true;
  };
  closePlayer.addEventListener('click', stopPlayer);
  const play = (asset: Asset) => {
    player.load(asset.id);
    setText(playerTitle, titleOf(asset));
    setAttr(statsLink, 'href', `#asset/${encodeURIComponent(asset.id)}`);
    playerSection.hidden = false;
    playerSection.scrollIntoView({ block: 'nearest' });
    void player.play();
  };

  // The list.
  const problem = new ProblemLine();
  const actionProblem = new ProblemLine();
  actionProblem.element.id = 'library-action-problem';
  const summary = h('p', { class: 'muted', id: 'library-summary' });
  const empty = h('p', { class: 'empty', hidden: true }, 'No assets yet: upload a media file above. It is packaged to HLS and then plays here and through the signed edge.');
  let assets: Asset[] = [];
  /**
   * Signed poster URLs by asset id and when they were signed: an image loads once, when its row
   * appears; a row drawn again later (another page and back) gets a URL signed again, within the
   * server's timestamp tolerance (PLAYLINE_TIMESTAMP_TOLERANCE_S, 300 s by default).
   */
  const posters = new Map<string, { url: string; at: number }>();
  const actions = new RowActions({ problem: actionProblem, redraw: () => table.update(assets), refresh: () => poller.refreshNow() });
  const remove = (asset: Asset): Promise<void> =>
    actions.run(asset.id, async () => {
      await ctx.api.deleteAsset(asset.id);
      if (player.current === asset.id) stopPlayer();
      posters.delete(asset.id);
    }, `Could not delete ${titleOf(asset)}: `, true);

  const table = new KeyedTable<Asset>(
    [
      {
        header: 'Poster',
        text: () => '',
        render: (a, cell) => {
          const url = posters.get(a.id)?.url;
          const current = cell.firstElementChild;
          if (url === undefined) {
            if (current) cell.replaceChildren();
            return;
          }
          if (current instanceof HTMLImageElement && current.dataset.asset === a.id) return;
          cell.replaceChildren(h('img', { class: 'poster', src: url, alt: `Poster of ${titleOf(a)}`, 'data-asset': a.id, width: 96, height: 54 }));
        },
      },
      { header: 'Title', text: titleOf, href: (a) => `#asset/${encodeURIComponent(a.id)}`, title: (a) => `Asset ${a.id}`, sticky: true },
      // Beside the title (which stays in view while the table scrolls).
      {
        header: '',
        text: () => '',
        actions: [
          { label: () => 'Play', title: 'Play it here (a playback URL signed in the page)', run: (a) => play(a), disabled: (a) => !canPlay(a) || actions.isPending(a.id) },
          {
            label: (a) => (actions.isPending(a.id) ? '…' : actions.isConfirming(a.id) ? 'Confirm delete' : 'Delete'),
            title: 'Deletes the asset and its media (a second click confirms)',
            className: (a) => (actions.isConfirming(a.id) ? 'confirm' : ''),
            run: (a) => void remove(a),
            disabled: (a) => actions.isPending(a.id),
          },
        ],
      },
      {
        header: 'State',
        text: (a) => a.state,
        // Any state the API returns shows; unknown ones are styled neutrally.
        cellClass: (a) => `badge asset-state asset-${KNOWN_STATES.has(a.state) ? a.state : 'other'}`,
      },
      {
        header: 'Packaging',
        text: (a) => (packaging(a) ? `${a.progress} %` : a.state === 'ready' ? 'done' : ''),
        sortValue: (a) => a.progress,
        render: (a, cell) => {
          let bar = cell.querySelector('progress');
          let label = cell.querySelector('span');
          if (!bar || !label) {
            bar = h('progress', { max: 100, value: 0 });
            label = h('span');
            cell.replaceChildren(bar, label);
          }
          bar.hidden = !packaging(a);
          if (bar.value !== a.progress) bar.value = a.progress;
          setText(label, packaging(a) ? `${a.progress} %` : a.state === 'ready' ? 'done' : '—');
        },
      },
      // A playable asset is still packaged: its duration grows until it is ready.
      { header: 'Duration', text: (a) => (a.state === 'playable' ? `${duration(a.duration_s)} so far` : duration(a.duration_s)), numeric: true, sortValue: (a) => a.duration_s ?? -1 },
      {
        header: 'Renditions',
        text: (a) => (a.renditions.length > 0 ? a.renditions.map((r) => r.name).join(', ') : '—'),
        title: (a) => a.renditions.map((r) => `${r.name}: ${r.width}×${r.height}, ${Math.round(r.bandwidth / 1000)} kbit/s`).join('\n'),
      },
      { header: 'Source', text: (a) => (a.source_slicer_id ? 'live recording' : 'upload'), title: (a) => (a.source_slicer_id ? `Recorded from slicer ${a.source_slicer_id}` : 'Uploaded'), optional: true },
      { header: 'Size', text: (a) => bytes(a.size_bytes), numeric: true, sortValue: (a) => a.size_bytes },
      { header: 'Uploaded', text: (a) => utcTime(a.created_at * 1000), sortValue: (a) => a.created_at },
      { header: 'Failure', text: (a) => a.failure_reason ?? '', wrap: true, optional: true },
    ],
    (a) => a.id,
    'Assets',
    { sortable: true },
  );
  table.element.id = 'library-assets';

  // Pages: the cursors of the pages seen (the first has none).
  let pages: (string | undefined)[] = [undefined];
  let next: string | undefined;
  const newer = h('button', { type: 'button', id: 'library-newer' }, '← Newer');
  const older = h('button', { type: 'button', id: 'library-older' }, 'Older →');
  newer.addEventListener('click', () => {
    if (pages.length > 1) pages = pages.slice(0, -1);
    void poller.refreshNow();
  });
  older.addEventListener('click', () => {
    if (next !== undefined) pages = [...pages, next];
    void poller.refreshNow();
  });
  const pager = h('div', { class: 'table-tools pager' }, newer, older);

  const element = h(
    'div',
    { class: 'view', id: 'view-library' },
    section('Upload to the library', h('p', { class: 'muted' }, 'The file is streamed to the server, which packages it to HLS in the background; the workspace\'s quotas apply.'), form, h('div', { class: 'upload-progress' }, progress, progressText), uploadProblem.element),
    playerSection,
    section('Library', summary, problem.element, actionProblem.element, empty, scroller(table.element), pager),
  );

  const poller: Poller = new Poller(async (): Promise<void> => {
    let result: Awaited<ReturnType<typeof ctx.api.assets>>;
    try {
      result = await ctx.api.assets(PAGE_SIZE, pages[pages.length - 1]);
      // A page emptied by deletes: back to the one before.
      while (result.page.items.length === 0 && pages.length > 1) {
        pages = pages.slice(0, -1);
        result = await ctx.api.assets(PAGE_SIZE, pages[pages.length - 1]);
      }
    } catch (err) {
      problem.show(err, isMissingRoute(err) ? 'This server does not offer the asset library: ' : 'Could not load the library: ');
      return;
    }
    problem.clear();
    assets = result.page.items;
    next = result.next;
    const now = Date.now();
    await Promise.all(assets.filter((a) => a.poster !== null && now - (posters.get(a.id)?.at ?? 0) > POSTER_RESIGN_MS).map(async (a) => {
      const path = (a.poster as string).startsWith(API_PREFIX) ? (a.poster as string).slice(API_PREFIX.length) : `/assets/${encodeURIComponent(a.id)}/poster.jpg`;
      posters.set(a.id, { url: await ctx.api.signedPath(path), at: now });
    }));
    table.update(assets);
    const total = result.page.total_items;
    const first = (pages.length - 1) * PAGE_SIZE + 1;
    const busy = assets.filter(packaging).length;
    setText(summary, total === 0 ? '' : `${total === assets.length ? `${total} asset${total === 1 ? '' : 's'}` : `Assets ${first}–${first + assets.length - 1} of ${total}`}, newest first${busy > 0 ? `; ${busy} packaging` : ''}.`);
    table.element.hidden = assets.length === 0;
    empty.hidden = assets.length > 0;
    newer.disabled = pages.length <= 1;
    older.disabled = next === undefined;
    pager.hidden = pages.length <= 1 && next === undefined;
  }, ctx.intervalMs);

  return {
    element,
    show: () => poller.start(),
    hide: () => {
      poller.stop();
      actions.clearConfirming();
      stopPlayer();
    },
  };
}
