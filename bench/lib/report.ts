/** One measured figure next to its baseline from the same run. */
export interface Comparison {
  name: string;
  unit: string;
  value: number;
  baseline?: { name: string; value: number };
  /** Human-readable target from DESIGN §9, e.g. ">= 90 % of baseline". */
  target?: string;
  /** Whether the target holds (undefined when there is none). */
  met?: boolean;
}

export interface Benchmark {
  name: string;
  description: string;
  run(): Promise<Comparison[]>;
  /** Runs only when named (`npm run bench -- soak`): too long for the default set. */
  optIn?: boolean;
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(3));

export function printComparison(c: Comparison): void {
  const parts = [`  ${c.name}: ${fmt(c.value)} ${c.unit}`];
  if (c.baseline) {
    parts.push(`| baseline ${c.baseline.name}: ${fmt(c.baseline.value)} ${c.unit}`);
    parts.push(`| ratio ${(c.value / c.baseline.value).toFixed(3)}`);
  }
  if (c.target) parts.push(`| target ${c.target}: ${c.met === undefined ? '?' : c.met ? 'met' : 'NOT met'}`);
  process.stdout.write(`${parts.join(' ')}\n`);
}
