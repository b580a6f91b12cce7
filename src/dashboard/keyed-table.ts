import { h, setText } from './dom.js';

/** One button of a row in an `actions` column. */
export interface RowButton<T> {
  label(row: T): string;
  run(row: T, button: HTMLButtonElement): void;
  disabled?(row: T): boolean;
  /** Extra class of the button (`confirm` while it waits for the second click). */
  className?(row: T): string;
  /** Tooltip. */
  title?: string;
}

/** One column: its header and how a row shows in it (text, an optional link, class or button). */
export interface Column<T> {
  header: string;
  text(row: T): string;
  /** Numeric columns align right. */
  numeric?: boolean;
  /** Extra class of the cell for this row (status badges). */
  cellClass?(row: T): string;
  /** The cell's text links here. */
  href?(row: T): string;
  /** Tooltip. */
  title?(row: T): string;
  /** The cell holds a button; `text` is its label. */
  action?: { run(row: T, button: HTMLButtonElement): void; disabled?(row: T): boolean };
  /** The cell holds these buttons, stacked (a row's actions in one narrow column); `text` is not shown. */
  actions?: RowButton<T>[];
  /** In a sortable table: what the column sorts by (default its text); actions never sort. */
  sortValue?(row: T): number | string;
  /** Long text (failures, errors, ingest URLs): wraps inside the cell instead of widening the table. */
  wrap?: boolean;
  /**
   * Draws the cell's content itself (a thumbnail, a progress bar) on every update, instead of
   * `text` (which still sorts and filters); it must write only what changed.
   */
  render?(row: T, cell: HTMLTableCellElement): void;
  /** Shown only while some row has text in it (fields the API gives for some rows only). */
  optional?: boolean;
  /** Stays in view while the table scrolls sideways inside its card (a row's name, so its actions are never out of reach of it). */
  sticky?: boolean;
}

export interface TableOptions<T> {
  /** Click a header to sort by it (again to reverse); numeric columns sort largest first. */
  sortable?: boolean;
  /** Extra class of a row (e.g. `stale`). */
  rowClass?(row: T): string;
}

type Direction = 'ascending' | 'descending';

interface RenderedRow<T> {
  tr: HTMLTableRowElement;
  cells: HTMLTableCellElement[];
  row: T;
}

/**
 * A table rendered by key: an update touches only the cells whose text changed, creates rows
 * for new keys, drops rows of vanished keys and, when the order changed, reorders the body in
 * one `replaceChildren`. A hundred rows refreshing every second stay cheap.
 */
export class KeyedTable<T> {
  readonly element: HTMLTableElement;
  private readonly body: HTMLTableSectionElement;
  private readonly rows = new Map<string, RenderedRow<T>>();
  private readonly headers: HTMLTableCellElement[];
  private order: string[] = [];
  private items: readonly T[] = [];
  private filter: ((row: T) => boolean) | null = null;
  private sort: { column: number; direction: Direction } | null = null;

  constructor(
    private readonly columns: Column<T>[],
    private readonly keyOf: (row: T) => string,
    label: string,
    private readonly options: TableOptions<T> = {},
  ) {
    this.body = h('tbody');
    this.headers = columns.map((c, i) => {
      const th = h('th', { scope: 'col', class: [c.numeric ? 'num' : '', c.sticky ? 'sticky' : ''].filter(Boolean).join(' ') || undefined });
      if (options.sortable && !c.action && !c.actions) {
        const button = h('button', { type: 'button', class: 'sort', title: `Sort by ${c.header.toLowerCase()}` }, c.header);
        button.addEventListener('click', () => this.sortBy(i));
        th.append(button);
      } else th.append(c.header);
      return th;
    });
    this.element = h('table', { class: 'data', 'aria-label': label }, h('thead', {}, h('tr', {}, ...this.headers)), this.body);
  }

  /** Rows shown (after the filter). */
  get size(): number {
    return this.order.length;
  }

  /** Rows given to the last update (before the filter). */
  get total(): number {
    return this.items.length;
  }

  /** Shows only the rows `keep` accepts (null: all), now and on every update. */
  setFilter(keep: ((row: T) => boolean) | null): void {
    this.filter = keep;
    this.render();
  }

  /** Sorts by column `index` (a second click on the same column reverses the order). */
  sortBy(index: number): void {
    const column = this.columns[index];
    if (!column) return;
    const first: Direction = column.numeric ? 'descending' : 'ascending';
    const direction: Direction = this.sort?.column === index ? (this.sort.direction === 'ascending' ? 'descending' : 'ascending') : first;
    this.sort = { column: index, direction };
    this.headers.forEach((th, i) => {
      if (i === index) th.setAttribute('aria-sort', direction);
      else th.removeAttribute('aria-sort');
    });
    this.render();
  }

  update(items: readonly T[]): void {
    this.items = items;
    this.render();
  }

  private arranged(): T[] {
    const kept = this.filter ? this.items.filter(this.filter) : [...this.items];
    if (!this.sort) return kept;
    const column = this.columns[this.sort.column] as Column<T>;
    const value = column.sortValue ?? ((row: T) => column.text(row));
    const sign = this.sort.direction === 'ascending' ? 1 : -1;
    // Stable: rows that compare equal keep the server's order.
    return kept
      .map((row, i) => ({ row, i, v: value(row) }))
      .sort((a, b) => {
        const c = typeof a.v === 'number' && typeof b.v === 'number' ? a.v - b.v : String(a.v).localeCompare(String(b.v), 'en', { numeric: true });
        return c === 0 ? a.i - b.i : c * sign;
      })
      .map((x) => x.row);
  }

  private render(): void {
    const items = this.arranged();
    const nextOrder: string[] = [];
    const seen = new Set<string>();
    for (const item of items) {
      const key = this.keyOf(item);
      if (seen.has(key)) continue;
      seen.add(key);
      nextOrder.push(key);
      const existing = this.rows.get(key);
      if (existing) {
        existing.row = item;
        this.fill(existing);
      } else {
        const rendered = this.create(key, item);
        this.rows.set(key, rendered);
        this.fill(rendered);
      }
    }
    for (const key of this.order) {
      if (!seen.has(key)) {
        this.rows.get(key)?.tr.remove();
        this.rows.delete(key);
      }
    }
    this.showOptionalColumns(nextOrder);
    const sameOrder = nextOrder.length === this.body.children.length && nextOrder.every((key, i) => this.body.children[i] === this.rows.get(key)?.tr);
    if (!sameOrder) this.body.replaceChildren(...nextOrder.map((key) => (this.rows.get(key) as RenderedRow<T>).tr));
    this.order = nextOrder;
  }

  private showOptionalColumns(keys: readonly string[]): void {
    this.columns.forEach((column, i) => {
      if (!column.optional) return;
      const show = keys.some((key) => {
        const rendered = this.rows.get(key);
        return rendered !== undefined && column.text(rendered.row) !== '';
      });
      const header = this.headers[i] as HTMLTableCellElement;
      if (header.hidden !== !show) header.hidden = !show;
      for (const key of keys) {
        const cell = this.rows.get(key)?.cells[i];
        if (cell && cell.hidden !== !show) cell.hidden = !show;
      }
    });
  }

  private create(key: string, row: T): RenderedRow<T> {
    const rendered: RenderedRow<T> = { tr: h('tr', { 'data-key': key }), cells: [], row };
    for (const column of this.columns) {
      const cell = h('td', { class: column.numeric ? 'num' : undefined });
      if (column.href) cell.append(h('a'));
      else if (column.action) {
        const { run } = column.action;
        const button = h('button', { type: 'button' });
        button.addEventListener('click', () => run(rendered.row, button));
        cell.append(button);
      } else if (column.actions) {
        const stack = h('div', { class: 'row-actions' });
        for (const action of column.actions) {
          const button = h('button', { type: 'button', title: action.title });
          button.addEventListener('click', () => action.run(rendered.row, button));
          stack.append(button);
        }
        cell.append(stack);
      }
      rendered.cells.push(cell);
      rendered.tr.append(cell);
    }
    return rendered;
  }

  private fill({ tr, cells, row }: RenderedRow<T>): void {
    const rowClass = this.options.rowClass?.(row) ?? '';
    if (tr.className !== rowClass) tr.className = rowClass;
    this.columns.forEach((column, i) => {
      const cell = cells[i] as HTMLTableCellElement;
      if (column.actions) fillButtons(cell, column.actions, row);
      const target = (cell.firstElementChild as HTMLElement | null) ?? cell;
      if (column.render) column.render(row, cell);
      else if (!column.actions) setText(target, column.text(row));
      if (column.href && target instanceof HTMLAnchorElement) {
        const href = column.href(row);
        if (target.getAttribute('href') !== href) target.setAttribute('href', href);
      }
      if (column.action && target instanceof HTMLButtonElement) {
        const disabled = column.action.disabled?.(row) ?? false;
        if (target.disabled !== disabled) target.disabled = disabled;
      }
      const className = [column.numeric ? 'num' : '', column.wrap ? 'wrap' : '', column.sticky ? 'sticky' : '', column.cellClass?.(row) ?? ''].filter(Boolean).join(' ');
      if (cell.className !== className) cell.className = className;
      const title = column.title?.(row);
      if (title !== undefined && cell.title !== title) cell.title = title;
    });
  }
}

function fillButtons<T>(cell: HTMLTableCellElement, actions: RowButton<T>[], row: T): void {
  const buttons = cell.querySelectorAll('button');
  actions.forEach((action, i) => {
    const button = buttons[i];
    if (!button) return;
    setText(button, action.label(row));
    const disabled = action.disabled?.(row) ?? false;
    if (button.disabled !== disabled) button.disabled = disabled;
    const className = action.className?.(row) ?? '';
    if (button.className !== className) button.className = className;
  });
}
