import type { VodStats } from '../api/types.js';
import { h, setText } from '../dom.js';
import { count, errorSessions, isMissingRoute, millis, utcTime } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import { NameBook } from '../name-book.js';
import type { LiveSnapshot } from '../live-stats.js';
import { HistoryCharts } from './history-charts.js';
import { ErrorCodesTable, FilterBox, ProblemLine, StatTiles, scroller, section } from './parts.js';
import type { View, ViewContext } from './view.js';

/**
 * An asset's row is stale when its 3-minute window (ending at its latest session start) ended
 * this long before the server's time of the latest refresh: its counts are not live totals.
 */
export const STALE_AFTER_MS = 5 * 60_000;

const eventExample = (owner: string) =>
  [
    `{"type":"request","owner":"${owner}","asset_id":"asset-1","session_id":"s-1"}`,
    `{"type":"manifest","owner":"${owner}","asset_id":"asset-1","session_id":"s-1","latency_ms":120}`,
    `{"type":"start","owner":"${owner}","asset_id":"asset-1","session_id":"s-1"}`,
  ].join('\n');

/** How to get statistics when there are none: the ingest endpoint, an example, the simulator. */
const howToSendEvents = (owner: string): HTMLElement =>
  h(
    'div',
    { class: 'empty' },
    h('p', {}, 'No playback statistics yet. Statistics appear within a second of the first playback events:'),
    h('ul', {},
      h('li', {}, 'send events to ', h('code', {}, 'POST /api/v4/monitoring/events'), ' (signed like every API call; ', h('code', {}, 'application/x-ndjson'), ', one event a line), for example:'),
    ),
    h('pre', {}, eventExample(owner)),
    h('ul', {},
      h('li', {}, 'or generate viewer traffic through the playback edge with ', h('code', {}, 'npx playline simulate'), '.'),
    ),
  );

/** Workspace summary tiles, top assets and errors by code, refreshed live. */
export function overviewView(ctx: ViewContext): View {
  const tiles = new StatTiles('Workspace summary, last 3 minutes');
  const updated = h('span', { class: 'muted', id: 'overview-updated' });
  const summaryProblem = new ProblemLine();
  const topProblem = new ProblemLine();
  const errors = new ErrorCodesTable('No playback errors in the last 3 minutes.');
  const empty = howToSendEvents(ctx.api.owner);
  empty.hidden = true;

  // The server's time of the latest refresh: staleness never depends on the browser's clock.
  let serverNow = 0;
  const stale = (r: VodStats): boolean => serverNow - r.ts > STALE_AFTER_MS;
  const names = new NameBook(ctx.api);
  const table = new KeyedTable<VodStats>(
    [
      // Its title (or slicer name) when the workspace has one; the id in the tooltip and the filter.
      { header: 'Asset', text: (r) => names.nameOf(r.id) ?? r.id, href: (r) => `#asset/${encodeURIComponent(r.id)}`, title: (r) => `Asset ${r.id}`, sticky: true },
      { header: 'New sessions', text: (r) => count(r.stats.sessions.new), numeric: true, sortValue: (r) => r.stats.sessions.new },
      { header: 'Requests', text: (r) => count(r.stats.sessions.requests), numeric: true, sortValue: (r) => r.stats.sessions.requests },
      { header: 'Manifests', text: (r) => count(r.stats.sessions.manifest), numeric: true, sortValue: (r) => r.stats.sessions.manifest },
      { header: 'Ads', text: (r) => count(r.stats.sessions.ad), numeric: true, sortValue: (r) => r.stats.sessions.ad },
      { header: 'Errors', text: (r) => count(errorSessions(r.stats)), numeric: true, sortValue: (r) => errorSessions(r.stats), cellClass: (r) => (errorSessions(r.stats) > 0 ? 'warn' : '') },
      { header: 'Manifest latency', text: (r) => (r.stats.sessions.manifest > 0 ? millis(r.stats.latency.manifest.mean_ms) : '—'), numeric: true, sortValue: (r) => (r.stats.sessions.manifest > 0 ? r.stats.latency.manifest.mean_ms : -1) },
      { header: 'Ad latency', text: (r) => millis(r.stats.latency.ad?.mean_ms), numeric: true, sortValue: (r) => r.stats.latency.ad?.mean_ms ?? -1 },
      { header: 'Latest start', text: (r) => utcTime(r.ts), sortValue: (r) => r.ts },
      {
        header: 'Window',
        text: (r) => (stale(r) ? 'stale' : 'live'),
        sortValue: (r) => (stale(r) ? 1 : 0),
        cellClass: (r) => (stale(r) ? 'badge stale-mark' : 'badge live-mark'),
        title: (r) => (stale(r) ? `Its 3-minute window ended at ${utcTime(r.ts)}, more than ${STALE_AFTER_MS / 60_000} minutes ago: these are not live totals` : 'Its 3-minute window ended within the last minutes'),
      },
    ],
    (r) => r.id,
    'Top assets by new sessions',
    { sortable: true, rowClass: (r) => (stale(r) ? 'stale' : '') },
  );
  table.element.id = 'top-assets';
  table.element.hidden = true;
  let idFilter = '';
  const hideStale = h('input', { type: 'checkbox', id: 'hide-stale' });
  const applyFilter = (): void => {
    const text = idFilter.toLowerCase();
    const hide = hideStale.checked;
    table.setFilter(text === '' && !hide ? null : (r) => (r.id.toLowerCase().includes(text) || (names.nameOf(r.id) ?? '').toLowerCase().includes(text)) && !(hide && stale(r)));
    showCount();
  };
  const filter = new FilterBox('asset-filter', 'Filter by title or asset id', (text) => {
    idFilter = text;
    applyFilter();
  });
  hideStale.addEventListener('change', applyFilter);
  const shown = h('span', { class: 'muted', id: 'top-assets-count' });
  const showCount = (): void => setText(shown, table.total === 0 ? '' : table.size === table.total ? `${count(table.total)} assets` : `${count(table.size)} of ${count(table.total)} assets`);
  const charts = new HistoryCharts(ctx.api, 'overview-history');

  const element = h(
    'div',
    { class: 'view', id: 'view-overview' },
    section('Workspace summary', h('p', { class: 'muted' }, 'All assets, the 3 minutes ending now. ', updated), tiles.element, summaryProblem.element),
    section('History', h('p', { class: 'muted' }, 'Per minute, from the server\'s statistics history (the last 24 hours are kept).'), charts.element),
    section(
      'Top assets',
      h('p', { class: 'muted' }, 'Up to 100 assets with the most new sessions; each asset\'s 3-minute window ends at its latest session start, and rows whose window ended more than 5 minutes ago are marked stale. Click a header to sort; select an asset for its charts.'),
      topProblem.element,
      empty,
      h('div', { class: 'table-tools' }, filter.element, h('label', { class: 'check' }, hideStale, 'Hide stale rows'), shown),
      scroller(table.element),
    ),
    section('Errors by code', errors.element),
  );

  const render = (s: LiveSnapshot): void => {
    tiles.update(s.summary?.stats ?? null);
    errors.update(s.summary?.stats ?? null);
    setText(updated, `Updated ${utcTime(s.at)}.`);
    summaryProblem.show(s.summaryError, isMissingRoute(s.summaryError) ? 'This server does not serve playback statistics yet: ' : 'Could not load the summary: ');
    topProblem.show(s.topError, 'Could not load the top assets: ');
    const items = s.top?.items ?? [];
    serverNow = s.summary?.ts ?? s.at;
    table.update(items);
    showCount();
    // Titles arrive after the first draw; the rows are drawn again once known.
    void names.learn(items.map((r) => r.id)).then((learned) => {
      if (learned) table.update(items);
    }, () => undefined);
    table.element.hidden = items.length === 0;
    empty.hidden = items.length > 0 || s.top === null;
  };

  let unsubscribe: (() => void) | undefined;
  return {
    element,
    show() {
      unsubscribe ??= ctx.live.subscribe(render);
      charts.start();
    },
    hide() {
      unsubscribe?.();
      unsubscribe = undefined;
      charts.stop();
    },
  };
}
