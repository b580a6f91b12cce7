import uPlot from 'uplot';
import type { VodStats } from '../api/types.js';
import { h, setText } from '../dom.js';
import { ApiProblem } from '../api/client.js';
import type { Sample } from '../history.js';
import { Poller } from '../poller.js';
import { utcTime } from '../format.js';
import { ErrorCodesTable, ProblemLine, StatTiles, section } from './parts.js';
import { AssetPlayer } from './player.js';
import type { View, ViewContext } from './view.js';

const columns = (samples: readonly Sample[]): uPlot.AlignedData => [
  samples.map((s) => s.t),
  samples.map((s) => s.started),
  samples.map((s) => s.requests),
  samples.map((s) => s.manifestMs),
  samples.map((s) => s.adMs),
];

const chartOptions = (width: number): uPlot.Options => ({
  width,
  height: 280,
  scales: { x: { time: true, range: (_u, min, max) => (max - min < 60 ? [max - 60, max] : [min, max]) }, count: { range: (_u, _min, max) => [0, Math.max(1, max)] }, ms: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
  series: [
    {},
    { label: 'New sessions', scale: 'count', stroke: '#2563eb', width: 2 },
    { label: 'Requests', scale: 'count', stroke: '#16a34a', width: 1 },
    { label: 'Manifest latency (ms)', scale: 'ms', stroke: '#d97706', width: 1, dash: [6, 3] },
    { label: 'Ad latency (ms)', scale: 'ms', stroke: '#9333ea', width: 1, dash: [2, 3] },
  ],
  axes: [
    {},
    { scale: 'count', label: 'sessions / requests' },
    { scale: 'ms', side: 1, label: 'latency (ms)', grid: { show: false } },
  ],
});

/** One asset: a player, its counters, a chart of what the page observed while open, its errors by code. */
export function assetView(ctx: ViewContext): View {
  let assetId: string | undefined;
  let chart: uPlot | undefined;
  const title = h('code');
  const window = h('p', { class: 'muted' });
  const tiles = new StatTiles('Asset statistics, 3-minute window');
  const problem = new ProblemLine();
  const errors = new ErrorCodesTable('No playback errors for this asset in its window.');
  const chartBox = h('div', { class: 'chart', id: 'asset-chart' });
  const chartNote = h('p', { class: 'muted' }, 'One point per refresh, since this page was opened: the 3-minute window as observed at that moment.');
  const player = new AssetPlayer(ctx.api);

  const element = h(
    'div',
    { class: 'view', id: 'view-asset' },
    h('p', {}, h('a', { href: '#overview' }, '← All assets')),
    section('Asset', h('h3', {}, title), window, h('div', { class: 'asset-top' }, player.element, h('div', {}, tiles.element, problem.element))),
    section('Sessions and latency', chartBox, chartNote),
    section('Errors by code', errors.element),
  );

  const drawChart = (): void => {
    if (!assetId) return;
    const data = columns(ctx.live.history.of(assetId));
    if (chart) chart.setData(data);
    else chart = new uPlot(chartOptions(Math.max(320, chartBox.clientWidth)), data, chartBox);
  };
  const resize = new ResizeObserver(() => chart?.setSize({ width: Math.max(320, chartBox.clientWidth), height: 280 }));

  const render = (stats: VodStats | null): void => {
    tiles.update(stats?.stats ?? null);
    errors.update(stats?.stats ?? null);
    setText(window, stats ? `3-minute window ending at the latest session start, ${utcTime(stats.ts)}.` : '');
    drawChart();
  };

  const poller = new Poller(async () => {
    const id = assetId;
    if (!id) return;
    try {
      const stats = await ctx.api.asset(id);
      if (id !== assetId) return;
      ctx.live.history.record([stats], Date.now());
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
        chart?.destroy();
        chart = undefined;
        setText(title, param ?? '');
        render(null);
      }
      player.load(param);
      resize.observe(chartBox);
      poller.start();
    },
    hide() {
      player.stop();
      poller.stop();
      resize.disconnect();
    },
  };
}
