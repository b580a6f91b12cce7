/** Prints data for people (aligned columns) or for scripts (`--json`). */
export function printRows(rows: Record<string, unknown>[], json: boolean, columns: string[]): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  process.stdout.write(`${line(columns)}\n`);
  for (const r of rows) process.stdout.write(`${line(columns.map((c) => cell(r[c])))}\n`);
}

export function printObject(value: Record<string, unknown>, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const width = Math.max(...Object.keys(value).map((k) => k.length));
  for (const [k, v] of Object.entries(value)) process.stdout.write(`${k.padEnd(width)}  ${v === null || v === undefined ? '-' : String(v)}\n`);
}
