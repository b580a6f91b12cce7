import { h, setText } from './dom.js';

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
}

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
  private order: string[] = [];

  constructor(
    private readonly columns: Column<T>[],
    private readonly keyOf: (row: T) => string,
    label: string,
  ) {
    this.body = h('tbody');
    const head = h('tr', {}, ...columns.map((c) => h('th', { scope: 'col', class: c.numeric ? 'num' : undefined }, c.header)));
    this.element = h('table', { class: 'data', 'aria-label': label }, h('thead', {}, head), this.body);
  }

  get size(): number {
    return this.order.length;
  }

  update(items: readonly T[]): void {
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
    const sameOrder = nextOrder.length === this.body.children.length && nextOrder.every((key, i) => this.body.children[i] === this.rows.get(key)?.tr);
    if (!sameOrder) this.body.replaceChildren(...nextOrder.map((key) => (this.rows.get(key) as RenderedRow<T>).tr));
    this.order = nextOrder;
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
      }
      rendered.cells.push(cell);
      rendered.tr.append(cell);
    }
    return rendered;
  }

  private fill({ cells, row }: RenderedRow<T>): void {
    this.columns.forEach((column, i) => {
      const cell = cells[i] as HTMLTableCellElement;
      const target = (cell.firstElementChild as HTMLElement | null) ?? cell;
      setText(target, column.text(row));
      if (column.href && target instanceof HTMLAnchorElement) {
        const href = column.href(row);
        if (target.getAttribute('href') !== href) target.setAttribute('href', href);
      }
      if (column.action && target instanceof HTMLButtonElement) {
        const disabled = column.action.disabled?.(row) ?? false;
        if (target.disabled !== disabled) target.disabled = disabled;
      }
      const className = [column.numeric ? 'num' : '', column.cellClass?.(row) ?? ''].filter(Boolean).join(' ');
      if (cell.className !== className) cell.className = className;
      const title = column.title?.(row);
      if (title !== undefined && cell.title !== title) cell.title = title;
    });
  }
}
