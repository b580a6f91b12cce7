import type { VodStats } from '../api/types.js';
import { h, setText } from '../dom.js';
import { ApiProblem } from '../api/client.js';
import { Poller } from '../poller.js';
import { utcTime } from '../format.js';
import { HistoryCharts } from './history-charts.js';
import { ErrorCodesTable, ProblemLine, StatTiles, section } from './parts.js';
import { AssetPlayer } from './player.js';
import type { View, ViewContext } from './view.js';

/** One asset: a player, its counters, its history charts (from the server), its errors by code. */
export function assetView(ctx: ViewContext): View {
  let assetId: string | undefined;
  const title = h('code');
  const window = h('p', { class: 'muted' });
  const tiles = new StatTiles('Asset statistics, 3-minute window');
  const problem = new ProblemLine();
  const errors = new ErrorCodesTable('No playback errors for this asset in its window.');
  const charts = new HistoryCharts(ctx.api, 'asset-history', (err) =>
    err instanceof ApiProblem && err.status === 404 ? 'No history for this asset (none in the 24 hours after its latest session start): ' : undefined,
  );
  const player = new AssetPlayer(ctx.api);

  const element = h(
    'div',
    { class: 'view', id: 'view-asset' },
    h('p', {}, h('a', { href: '#overview' }, '← All assets')),
    section('Asset', h('h3', {}, title), window, h('div', { class: 'asset-top' }, player.element, h('div', {}, tiles.element, problem.element))),
    section('History', h('p', { class: 'muted' }, 'Per minute, from the server\'s statistics history of this asset.'), charts.element),
    section('Errors by code', errors.element),
  );

  const render = (stats: VodStats | null): void => {
    tiles.update(stats?.stats ?? null);
    errors.update(stats?.stats ?? null);
    setText(window, stats ? `3-minute window ending at the latest session start, ${utcTime(stats.ts)}.` : '');
  };

  const poller = new Poller(async () => {
    const id = assetId;
    if (!id) return;
    try {
      const stats = await ctx.api.asset(id);
      if (id !== assetId) return;
      problem.clear();
      render(stats);
    } catch (err) {
      if (id !== assetId) return;
      const gone = err instanceof ApiProblem && err.status === 404;
      problem.show(err, gone ? 'No statistics for this asset (none in the 24 hours after its latest session start): ' : 'Could not load the asset: ');
      render(null);
    }
  }, ctx.intervalMs);

  return {
    element,
    show(param) {
      if (param !== assetId) {
        assetId = param;
        setText(title, param ?? '');
        render(null);
      }
      player.load(param);
      charts.start(param);
      poller.start();
    },
    hide() {
      player.stop();
      poller.stop();
      charts.stop();
    },
  };
}
