import type { Stats } from '../api/types.js';
import { h, setText } from '../dom.js';
import { count, describeFailure, errorRows, errorSessions } from '../format.js';
import { KeyedTable } from '../keyed-table.js';

const tiles = [
  { key: 'requests', label: 'Requests', hint: 'Playback requests', value: (s: Stats) => s.sessions.requests },
  { key: 'manifest', label: 'Manifests', hint: 'New sessions that loaded the manifest', value: (s: Stats) => s.sessions.manifest },
  { key: 'ad', label: 'Ads', hint: 'New sessions that loaded ads', value: (s: Stats) => s.sessions.ad },
  { key: 'new', label: 'New sessions', hint: 'Sessions for which playback started', value: (s: Stats) => s.sessions.new },
  { key: 'errors', label: 'Errors', hint: 'Playback sessions with an error, over all codes', value: errorSessions },
] as const;

/** The five counters of a stats body (requests, manifests, ads, new sessions, errors). */
export class StatTiles {
  readonly element: HTMLElement;
  private readonly values: HTMLElement[];
  private readonly boxes: HTMLElement[];

  constructor(label: string) {
    this.values = tiles.map(() => h('span', { class: 'tile-value' }, '—'));
    this.boxes = tiles.map((tile, i) => h('div', { class: `tile tile-${tile.key}`, 'data-tile': tile.key, title: tile.hint }, h('span', { class: 'tile-label' }, tile.label), this.values[i] as HTMLElement));
    this.element = h('div', { class: 'tiles', role: 'group', 'aria-label': label }, ...this.boxes);
  }

  update(stats: Stats | null): void {
    tiles.forEach((tile, i) => {
      const value = stats ? tile.value(stats) : null;
      setText(this.values[i] as HTMLElement, value === null ? '—' : count(value));
      this.boxes[i]?.classList.toggle('nonzero', value !== null && value > 0);
    });
  }
}

/** A line that says what went wrong (hidden while nothing is wrong). */
export class ProblemLine {
  readonly element = h('p', { class: 'problem', role: 'alert', hidden: true });

  show(err: unknown, prefix = ''): void {
    if (err === null || err === undefined) {
      this.element.hidden = true;
      return;
    }
    setText(this.element, `${prefix}${describeFailure(err)}`);
    this.element.hidden = false;
  }

  clear(): void {
    this.element.hidden = true;
  }
}

/** Error codes with their meaning and sessions, or an empty state. */
export class ErrorCodesTable {
  private readonly table = new KeyedTable<{ code: string; sessions: number; meaning: string }>(
    [
      { header: 'Code', text: (r) => r.code },
      { header: 'Meaning', text: (r) => r.meaning },
      { header: 'Sessions', text: (r) => count(r.sessions), numeric: true },
    ],
    (r) => r.code,
    'Playback errors by code',
  );
  private readonly empty: HTMLElement;
  readonly element: HTMLElement;

  constructor(emptyText: string) {
    this.empty = h('p', { class: 'empty' }, emptyText);
    this.element = h('div', {}, this.table.element, this.empty);
  }

  update(stats: Stats | null): void {
    const rows = stats ? errorRows(stats) : [];
    this.table.update(rows);
    this.table.element.hidden = rows.length === 0;
    this.empty.hidden = rows.length > 0;
  }
}

/** A titled section of a view. */
export const section = (title: string, ...children: (Node | string)[]): HTMLElement =>
  h('section', { class: 'panel' }, h('h2', {}, title), ...children);
