import uPlot from 'uplot';
import type { DashboardApi } from '../api/client.js';
import { ApiProblem } from '../api/client.js';
import type { History, HistoryPoint, HistoryRange } from '../api/types.js';
import { h, setText } from '../dom.js';
import { count, errorMeaning } from '../format.js';
import { Poller } from '../poller.js';
import { ProblemLine } from './parts.js';

/** The ranges offered, as the history API names them. */
export const RANGES: readonly { range: HistoryRange; label: string; minutes: number }[] = [
  { range: '15m', label: '15 min', minutes: 15 },
  { range: '1h', label: '1 h', minutes: 60 },
  { range: '6h', label: '6 h', minutes: 360 },
  { range: '24h', label: '24 h', minutes: 1440 },
];

/** The chosen range outlives a reload (this tab only; signing out forgets it with the rest). */
const RANGE_KEY = 'playline.dashboard.range';
const savedRange = (): HistoryRange => {
  const saved = sessionStorage.getItem(RANGE_KEY);
  return RANGES.some((r) => r.range === saved) ? (saved as HistoryRange) : '1h';
};

/** History is per minute: refreshing it every 15 s keeps the last minute current. */
const REFRESH_MS = 15_000;
const CHART_HEIGHT = 190;
const palette = ['#dc2626', '#d97706', '#7c3aed', '#0891b2', '#be185d', '#4d7c0f', '#57534e'];

interface ChartSpec {
  key: string;
  title: string;
  /** Series after x: label, scale, colour, dash; and the column of each minute. */
  /** `sparse`: null in minutes without samples (means, maxima, rates): drawn with points, so a lone minute shows. */
  series(points: readonly HistoryPoint[], codes: readonly string[]): { label: string; title?: string; scale: string; stroke: string; dash?: number[]; sparse?: boolean; values: (p: HistoryPoint | undefined) => number | null }[];
  axes: { scale: string; label: string; side?: number }[];
}

const mean = (samples: number, value: number): number | null => (samples === 0 ? null : value);

const specs: ChartSpec[] = [
  {
    key: 'sessions',
    title: 'Sessions and requests',
    series: () => [
      { label: 'New sessions', scale: 'n', stroke: '#2563eb', values: (p) => p?.sessions.new ?? 0 },
      { label: 'Requests', scale: 'n', stroke: '#16a34a', values: (p) => p?.sessions.requests ?? 0 },
    ],
    axes: [{ scale: 'n', label: 'per minute' }],
  },
  {
    key: 'errors',
    title: 'Errors by code and error rate',
    series: (_points, codes) => [
      ...codes.map((code, i) => ({ label: `Code ${code}`, title: errorMeaning(code), scale: 'n', stroke: palette[i % palette.length] as string, values: (p: HistoryPoint | undefined) => p?.errors[code] ?? 0 })),
      { label: 'Error rate (%)', scale: '%', stroke: '#111827', dash: [4, 3], sparse: true, values: (p) => (p?.error_rate === null || p === undefined ? null : Math.round(p.error_rate * 1000) / 10) },
    ],
    axes: [{ scale: 'n', label: 'sessions' }, { scale: '%', label: 'error rate %', side: 1 }],
  },
  {
    key: 'latency',
    title: 'Manifest and ad latency',
    series: () => [
      { label: 'Manifest mean (ms)', scale: 'ms', sparse: true, stroke: '#d97706', values: (p) => (p ? mean(p.latency.manifest.samples, p.latency.manifest.mean_ms) : null) },
      { label: 'Manifest max (ms)', scale: 'ms', sparse: true, stroke: '#d97706', dash: [2, 3], values: (p) => (p ? mean(p.latency.manifest.samples, p.latency.manifest.max_ms) : null) },
      { label: 'Ad mean (ms)', scale: 'ms', sparse: true, stroke: '#9333ea', values: (p) => (p ? mean(p.latency.ad.samples, p.latency.ad.mean_ms) : null) },
      { label: 'Ad max (ms)', scale: 'ms', sparse: true, stroke: '#9333ea', dash: [2, 3], values: (p) => (p ? mean(p.latency.ad.samples, p.latency.ad.max_ms) : null) },
    ],
    axes: [{ scale: 'ms', label: 'ms' }],
  },
  {
    key: 'quality',
    title: 'Rebuffering and startup',
    series: () => [
      { label: 'Rebuffers', scale: 'n', stroke: '#0891b2', values: (p) => p?.rebuffers ?? 0 },
      { label: 'Startup mean (ms)', scale: 'ms', sparse: true, stroke: '#4d7c0f', values: (p) => (p ? mean(p.startup.samples, p.startup.mean_ms) : null) },
      { label: 'Startup max (ms)', scale: 'ms', sparse: true, stroke: '#4d7c0f', dash: [2, 3], values: (p) => (p ? mean(p.startup.samples, p.startup.max_ms) : null) },
    ],
    axes: [{ scale: 'n', label: 'reports' }, { scale: 'ms', label: 'startup ms', side: 1 }],
  },
];

const plural = (n: number, noun: string): string => `${count(n)} ${noun}${n === 1 ? '' : 's'}`;
const hhmm = (unixS: number): string => new Date(unixS * 1000).toISOString().slice(11, 16);
/** `21:05`, or `2026-11-21 21:05` when the range spans two dates. */
const span = (from: number, to: number): string => {
  const [a, b] = [new Date(from * 1000).toISOString(), new Date(to * 1000).toISOString()];
  return a.slice(0, 10) === b.slice(0, 10) ? `${a.slice(11, 16)}–${b.slice(11, 16)} UTC` : `${a.slice(0, 16).replace('T', ' ')} – ${b.slice(0, 16).replace('T', ' ')} UTC`;
};

interface MountedChart {
  box: HTMLElement;
  plot: uPlot | undefined;
  signature: string;
}

/**
 * Charts of the statistics history API over a selectable range (15 min to 24 h): the workspace's,
 * or one asset's. Everything drawn comes from the server, so a reload shows the same history.
 */
export class HistoryCharts {
  readonly element: HTMLElement;
  private range: HistoryRange = savedRange();
  private assetId: string | undefined;
  private seq = 0;
  private readonly buttons: HTMLButtonElement[];
  private readonly summary: HTMLElement;
  private readonly problem = new ProblemLine();
  private readonly charts: MountedChart[];
  private readonly poller: Poller;
  private readonly resize: ResizeObserver;
  private last: History | null = null;
  /** The x range of every chart (read by their scale on each redraw). */
  private xRange: [number, number] = [0, 60];
  private shown = false;

  constructor(
    private readonly api: DashboardApi,
    idPrefix: string,
    private readonly onMissing?: (err: unknown) => string | undefined,
  ) {
    this.buttons = RANGES.map((r) => {
      const button = h('button', { type: 'button', 'data-range': r.range, 'aria-pressed': String(r.range === this.range) }, r.label);
      button.addEventListener('click', () => this.select(r.range));
      return button;
    });
    this.summary = h('p', { class: 'muted history-summary', id: `${idPrefix}-summary` });
    this.charts = specs.map((spec) => ({ box: h('div', { class: 'chart', 'data-chart': spec.key, id: `${idPrefix}-${spec.key}` }), plot: undefined, signature: '' }));
    this.element = h(
      'div',
      { class: 'history', id: idPrefix },
      h('div', { class: 'ranges', role: 'group', 'aria-label': 'History range' }, h('span', { class: 'muted' }, 'Last'), ...this.buttons),
      this.summary,
      this.problem.element,
      h('div', { class: 'chart-grid' }, ...specs.map((spec, i) => h('figure', { class: 'chart-card' }, h('figcaption', {}, spec.title), (this.charts[i] as MountedChart).box))),
    );
    this.poller = new Poller(() => this.refresh(), REFRESH_MS);
    this.resize = new ResizeObserver(() => {
      for (const chart of this.charts) chart.plot?.setSize({ width: this.widthOf(chart.box), height: CHART_HEIGHT });
    });
  }

  /** Starts showing the history of `assetId` (undefined: the workspace). */
  start(assetId?: string): void {
    const changed = assetId !== this.assetId;
    const wasShown = this.shown;
    this.shown = true;
    if (changed) {
      this.assetId = assetId;
      this.last = null;
      this.element.removeAttribute('data-points');
      for (const chart of this.charts) this.clear(chart);
    }
    for (const chart of this.charts) this.resize.observe(chart.box);
    this.poller.start();
    // Another asset while the view stays open: its history now, not at the next tick.
    if (changed && wasShown) void this.refresh();
  }

  stop(): void {
    this.shown = false;
    this.poller.stop();
    this.resize.disconnect();
  }

  private select(range: HistoryRange): void {
    this.range = range;
    sessionStorage.setItem(RANGE_KEY, range);
    for (const button of this.buttons) button.setAttribute('aria-pressed', String(button.dataset.range === range));
    this.element.removeAttribute('data-points');
    // Not through the poller (it skips while a refresh runs): the newest request wins by its sequence number.
    void this.refresh();
  }

  private async refresh(): Promise<void> {
    const seq = ++this.seq;
    const range = this.range;
    const assetId = this.assetId;
    try {
      const history = await this.api.history(range, assetId);
      if (seq !== this.seq) return;
      this.problem.clear();
      this.last = history;
      this.draw(history, range);
    } catch (err) {
      if (seq !== this.seq) return;
      const prefix = this.onMissing?.(err) ?? (err instanceof ApiProblem && err.code === 'route_not_found' ? 'This server does not keep a statistics history: ' : 'Could not load the history: ');
      this.problem.show(err, prefix);
    }
  }

  private draw(history: History, range: HistoryRange): void {
    // One column per minute of the range: minutes without events are zeros (latency: gaps).
    const first = Math.floor(history.from / 60) * 60;
    const last = Math.floor(history.to / 60) * 60;
    const byMinute = new Map(history.points.map((p) => [p.ts / 1000, p]));
    const xs: number[] = [];
    for (let t = first; t <= last; t += 60) xs.push(t);
    this.xRange = [first, Math.max(last, first + 60)];
    const codes = [...new Set(history.points.flatMap((p) => Object.keys(p.errors)))].sort((a, b) => Number(a) - Number(b));
    specs.forEach((spec, i) => {
      const chart = this.charts[i] as MountedChart;
      const series = spec.series(history.points, codes);
      const data: uPlot.AlignedData = [xs, ...series.map((s) => xs.map((t) => s.values(byMinute.get(t))))];
      const signature = series.map((s) => s.label).join('|');
      if (chart.plot && chart.signature === signature) {
        chart.plot.setData(data);
        return;
      }
      this.clear(chart);
      chart.signature = signature;
      chart.plot = new uPlot(this.options(spec, series), data, chart.box);
      // A series' title (an error code's meaning) shows when hovering its legend entry.
      series.forEach((s, n) => {
        if (s.title) chart.plot?.root.querySelectorAll('.u-legend .u-series')[n + 1]?.setAttribute('title', s.title);
      });
    });
    const totals = history.points.reduce(
      (sum, p) => ({ sessions: sum.sessions + p.sessions.new, requests: sum.requests + p.sessions.requests, errors: sum.errors + p.error_sessions }),
      { sessions: 0, requests: 0, errors: 0 },
    );
    const label = RANGES.find((r) => r.range === range)?.label ?? range;
    setText(
      this.summary,
      history.points.length === 0
        ? `No playback events in the last ${label} (${span(history.from, history.to)}).`
        : `Last ${label}, ${span(history.from, history.to)}: ${plural(history.points.length, 'minute')} with events; ` +
            `${plural(totals.sessions, 'new session')}, ${plural(totals.requests, 'request')}, ${plural(totals.errors, 'session')} with errors.`,
    );
    this.element.dataset.range = range;
    this.element.dataset.points = String(history.points.length);
    this.element.dataset.from = String(history.from);
    this.element.dataset.to = String(history.to);
  }

  private options(spec: ChartSpec, series: ReturnType<ChartSpec['series']>): uPlot.Options {
    return {
      width: this.widthOf(this.charts[specs.indexOf(spec)]?.box),
      height: CHART_HEIGHT,
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: true, range: () => this.xRange },
        n: { range: (_u, _min, max) => [0, Math.max(1, max)] },
        ms: { range: (_u, _min, max) => [0, Math.max(1, max)] },
        '%': { range: (_u, _min, max) => [0, Math.max(1, max)] },
      },
      series: [{ value: (_u, v) => (v === null ? '—' : `${hhmm(v)} UTC`) }, ...series.map((s) => ({ label: s.label, scale: s.scale, stroke: s.stroke, width: 1.5, ...(s.dash ? { dash: s.dash } : {}), points: s.sparse ? { show: true, size: 4, fill: s.stroke } : { show: false } }))],
      axes: [
        { values: (_u, ticks) => ticks.map((t) => hhmm(t)) },
        ...spec.axes.map((a) => ({ scale: a.scale, label: a.label, ...(a.side === undefined ? {} : { side: a.side, grid: { show: false } }), size: 58 })),
      ],
    };
  }

  private widthOf(box: HTMLElement | undefined): number {
    return Math.max(240, Math.floor(box?.clientWidth ?? 320));
  }

  private clear(chart: MountedChart): void {
    chart.plot?.destroy();
    chart.plot = undefined;
    chart.signature = '';
  }

  /** The history last drawn (tests and the asset view read its range). */
  get current(): History | null {
    return this.last;
  }
}
