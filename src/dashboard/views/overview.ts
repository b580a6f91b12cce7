import type { VodStats } from '../api/types.js';
import { h, setText } from '../dom.js';
import { count, errorSessions, isMissingRoute, millis, utcTime } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import type { LiveSnapshot } from '../live-stats.js';
import { ErrorCodesTable, ProblemLine, StatTiles, section } from './parts.js';
import type { View, ViewContext } from './view.js';

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

  const table = new KeyedTable<VodStats>(
    [
      { header: 'Asset', text: (r) => r.id, href: (r) => `#asset/${encodeURIComponent(r.id)}` },
      { header: 'New sessions', text: (r) => count(r.stats.sessions.new), numeric: true },
      { header: 'Requests', text: (r) => count(r.stats.sessions.requests), numeric: true },
      { header: 'Manifests', text: (r) => count(r.stats.sessions.manifest), numeric: true },
      { header: 'Ads', text: (r) => count(r.stats.sessions.ad), numeric: true },
      { header: 'Errors', text: (r) => count(errorSessions(r.stats)), numeric: true, cellClass: (r) => (errorSessions(r.stats) > 0 ? 'warn' : '') },
      { header: 'Manifest latency', text: (r) => (r.stats.sessions.manifest > 0 ? millis(r.stats.latency.manifest.mean_ms) : '—'), numeric: true },
      { header: 'Ad latency', text: (r) => millis(r.stats.latency.ad?.mean_ms), numeric: true },
      { header: 'Latest start', text: (r) => utcTime(r.ts) },
    ],
    (r) => r.id,
    'Top assets by new sessions',
  );
  table.element.id = 'top-assets';
  table.element.hidden = true;

  const element = h(
    'div',
    { class: 'view', id: 'view-overview' },
    section('Workspace summary', h('p', { class: 'muted' }, 'All assets, the 3 minutes ending now. ', updated), tiles.element, summaryProblem.element),
    section('Top assets', h('p', { class: 'muted' }, 'Up to 100 assets with the most new sessions; each asset\'s 3-minute window ends at its latest session start. Select one for its chart.'), topProblem.element, empty, table.element),
    section('Errors by code', errors.element),
  );

  const render = (s: LiveSnapshot): void => {
    tiles.update(s.summary?.stats ?? null);
    errors.update(s.summary?.stats ?? null);
    setText(updated, `Updated ${utcTime(s.at)}.`);
    summaryProblem.show(s.summaryError, isMissingRoute(s.summaryError) ? 'This server does not serve playback statistics yet: ' : 'Could not load the summary: ');
    topProblem.show(s.topError, 'Could not load the top assets: ');
    const items = s.top?.items ?? [];
    table.update(items);
    table.element.hidden = items.length === 0;
    empty.hidden = items.length > 0 || s.top === null;
  };

  let unsubscribe: (() => void) | undefined;
  return {
    element,
    show() {
      unsubscribe ??= ctx.live.subscribe(render);
    },
    hide() {
      unsubscribe?.();
      unsubscribe = undefined;
    },
  };
}
