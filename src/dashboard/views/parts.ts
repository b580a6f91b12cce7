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

/**
 * The per-row actions of a table (revoke, delete, start/stop): while a row's request runs it is
 * pending (its button shows … and is disabled); an action that needs confirming takes a second
 * click; a failure shows in `problem`, a success clears it, and either way the view refreshes.
 */
export class RowActions {
  private readonly confirming = new Set<string>();
  private readonly pending = new Set<string>();

  constructor(private readonly o: { problem: ProblemLine; redraw: () => void; refresh: () => Promise<void> }) {}

  isPending(id: string): boolean {
    return this.pending.has(id);
  }

  isConfirming(id: string): boolean {
    return this.confirming.has(id);
  }

  /** Forgets the first clicks (the view is left). */
  clearConfirming(): void {
    this.confirming.clear();
  }

  /** Runs `operation` for row `id`; with `confirm`, a first click only asks for the second. */
  async run(id: string, operation: () => Promise<unknown>, failurePrefix: string, confirm = false): Promise<void> {
    if (confirm && !this.confirming.has(id)) {
      this.confirming.add(id);
      this.o.redraw();
      return;
    }
    this.confirming.delete(id);
    this.pending.add(id);
    this.o.redraw();
    try {
      await operation();
      this.o.problem.clear();
    } catch (err) {
      this.o.problem.show(err, failurePrefix);
    } finally {
      this.pending.delete(id);
      await this.o.refresh();
    }
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
    this.element = h('div', {}, scroller(this.table.element), this.empty);
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

/** A text box that filters a table as one types (by asset id, name...). */
export class FilterBox {
  readonly element: HTMLElement;
  readonly input: HTMLInputElement;

  constructor(id: string, label: string, onChange: (text: string) => void) {
    this.input = h('input', { type: 'search', id, placeholder: label, 'aria-label': label, autocomplete: 'off', spellcheck: 'false' });
    this.input.addEventListener('input', () => onChange(this.input.value.trim()));
    this.element = h('label', { class: 'filter' }, this.input);
  }
}

/**
 * The rule errors of a problem (`errors: [{path, message}]`) next to the fields they name:
 * `fields` maps a JSON path (`/target_stream`, `/platform_config/port`) to its field's error line.
 * Returns the messages no field took, to show in the form's own problem line.
 */
export function showFieldErrors(err: unknown, fields: ReadonlyMap<string, HTMLElement>): string[] {
  const inputOf = (line: HTMLElement) => line.parentElement?.querySelector('input, select') ?? null;
  for (const line of fields.values()) {
    line.hidden = true;
    line.textContent = '';
    inputOf(line)?.removeAttribute('aria-invalid');
  }
  const body = (err as { body?: { errors?: unknown } } | null)?.body;
  const errors = Array.isArray(body?.errors) ? (body.errors as { path?: unknown; message?: unknown }[]) : [];
  const rest: string[] = [];
  for (const e of errors) {
    const path = String(e.path ?? '').replace(/^\/body/, '');
    const message = String(e.message ?? '');
    const line = fields.get(path) ?? [...fields.entries()].find(([p]) => path.startsWith(`${p}/`))?.[1];
    if (line) {
      line.textContent = line.textContent ? `${line.textContent}; ${message}` : message;
      line.hidden = false;
      inputOf(line)?.setAttribute('aria-invalid', 'true');
    } else rest.push(path ? `${path}: ${message}` : message);
  }
  return rest;
}

/** A table that scrolls sideways inside its card when it is wider than the card (phones). */
/**
 * A table that scrolls sideways inside its card. When it is wider than the card, the edge it can
 * still scroll towards shows a shadow and the box says so (`data-overflow`: `right`, `left`,
 * `both`), so no column is out of sight without a cue.
 */
export function scroller(table: HTMLElement): HTMLElement {
  const box = h('div', { class: 'table-scroll', 'data-overflow': 'none' }, table);
  const mark = (): void => {
    const room = box.scrollWidth - box.clientWidth;
    const left = box.scrollLeft > 1;
    const right = room - box.scrollLeft > 1;
    const overflow = left && right ? 'both' : left ? 'left' : right ? 'right' : 'none';
    if (box.dataset.overflow !== overflow) box.dataset.overflow = overflow;
  };
  box.addEventListener('scroll', mark, { passive: true });
  new ResizeObserver(mark).observe(box);
  new ResizeObserver(mark).observe(table);
  return box;
}
