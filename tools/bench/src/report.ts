/** Prints benchmark figures beside their baselines and targets; a miss is shown, never hidden. */
export interface Row {
  name: string;
  value: number;
  unit: string;
  baseline?: number;
  /** e.g. "≤ 10 s" or "≥ 60 % of baseline" */
  target: string;
  met: boolean;
}

export function printTable(title: string, rows: Row[]): void {
  console.log(`\n## ${title}\n`);
  console.log('| measure | value | baseline | target | met |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) {
    const base = r.baseline === undefined ? '' : `${fmt(r.baseline)} ${r.unit}`;
    console.log(
      `| ${r.name} | ${fmt(r.value)} ${r.unit} | ${base} | ${r.target} | ${r.met ? 'yes' : '**MISSED**'} |`,
    );
  }
}

function fmt(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2);
}
