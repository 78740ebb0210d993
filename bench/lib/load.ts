/** One autocannon run with fixed settings, summarised. */
import autocannon from 'autocannon';

export interface LoadResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export const BENCH_DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
export const BENCH_CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

export async function load(
  name: string,
  url: string,
  requests: { method: string; path: string; body: string; headers?: Record<string, string> }[],
  durationS = BENCH_DURATION_S,
): Promise<LoadResult> {
  const r = await autocannon({
    url,
    connections: BENCH_CONNECTIONS,
    duration: durationS,
    requests: requests.map((q) => ({ ...q, headers: { 'content-type': 'application/json', ...q.headers } })),
  });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts };
}

export function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '';
  // Every row's columns, in the order they first appear: a column only later rows have (the
  // scrape + cycle runs' ratio to the quiet runs) is shown too, empty where a row lacks it.
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v: unknown) => (v === undefined ? '' : typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => '| ' + vals.map((v, i) => v.padEnd(widths[i])).join(' | ') + ' |';
  return [line(cols), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n');
}
