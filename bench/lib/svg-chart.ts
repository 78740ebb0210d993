/**
 * A time chart as a standalone SVG (no browser, no dependency): lines of ratios (0 to 1)
 * over seconds, shaded intervals (e.g. the incident) and labelled vertical marks (e.g. the
 * failover and the recovery). A NaN value breaks its line.
 */

export interface ChartSeries {
  name: string;
  color: string;
  /** [seconds, ratio 0..1] */
  points: readonly (readonly [number, number])[];
  dashed?: boolean;
}

export interface ChartMark {
  atS: number;
  label: string;
  color: string;
}

export interface ChartBand {
  fromS: number;
  toS: number;
  label: string;
  color: string;
}

export interface TimeChart {
  title: string;
  subtitle?: string;
  series: ChartSeries[];
  marks?: ChartMark[];
  bands?: ChartBand[];
  /** Right end of the x axis, seconds (default: the last point). */
  durationS?: number;
  width?: number;
  height?: number;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fmt = (n: number) => (Math.round(n * 10) / 10).toString();

/** A "nice" tick step for a span (1, 2 or 5 × 10^k) giving about `target` ticks. */
function tickStep(span: number, target: number): number {
  const raw = span / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const m = raw / mag;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * mag;
}

export function renderTimeChart(c: TimeChart): string {
  const W = c.width ?? 960;
  const H = c.height ?? 420;
  const L = 56;
  const R = 24;
  const T = c.subtitle ? 64 : 48;
  const B = 84;
  const pw = W - L - R;
  const ph = H - T - B;
  const lastX = Math.max(1, ...c.series.flatMap((s) => s.points.map((p) => p[0])));
  const span = c.durationS ?? lastX;
  const x = (s: number) => L + (Math.min(Math.max(s, 0), span) / span) * pw;
  const y = (v: number) => T + (1 - Math.min(Math.max(v, 0), 1)) * ph;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${L}" y="22" font-size="16" font-weight="bold" fill="#222">${esc(c.title)}</text>`,
  );
  if (c.subtitle) out.push(`<text x="${L}" y="42" fill="#555">${esc(c.subtitle)}</text>`);
  for (const b of c.bands ?? []) {
    out.push(
      `<rect x="${fmt(x(b.fromS))}" y="${T}" width="${fmt(Math.max(1, x(b.toS) - x(b.fromS)))}" height="${ph}" fill="${b.color}" opacity="0.12"/>`,
      `<text x="${fmt(x(b.fromS) + 4)}" y="${T + 14}" fill="${b.color}">${esc(b.label)}</text>`,
    );
  }
  // Grid and axes.
  for (let v = 0; v <= 1.0001; v += 0.25) {
    out.push(
      `<line x1="${L}" x2="${L + pw}" y1="${fmt(y(v))}" y2="${fmt(y(v))}" stroke="#e4e4e4"/>`,
      `<text x="${L - 8}" y="${fmt(y(v) + 4)}" text-anchor="end" fill="#555">${Math.round(v * 100)}%</text>`,
    );
  }
  const step = tickStep(span, 10);
  for (let s = 0; s <= span + 1e-9; s += step) {
    out.push(
      `<line x1="${fmt(x(s))}" x2="${fmt(x(s))}" y1="${T + ph}" y2="${T + ph + 4}" stroke="#888"/>`,
      `<text x="${fmt(x(s))}" y="${T + ph + 18}" text-anchor="middle" fill="#555">${fmt(s)}</text>`,
    );
  }
  out.push(
    `<line x1="${L}" x2="${L + pw}" y1="${T + ph}" y2="${T + ph}" stroke="#888"/>`,
    `<line x1="${L}" x2="${L}" y1="${T}" y2="${T + ph}" stroke="#888"/>`,
    `<text x="${L + pw / 2}" y="${T + ph + 36}" text-anchor="middle" fill="#333">time (s)</text>`,
  );
  // Lines, broken at NaN.
  for (const s of c.series) {
    let d = '';
    let pen = false;
    for (const [t, v] of s.points) {
      if (!Number.isFinite(v)) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${fmt(x(t))},${fmt(y(v))}`;
      pen = true;
    }
    if (d !== '') {
      out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}><title>${esc(s.name)}</title></path>`);
    }
  }
  // Marks: vertical lines, labels staggered so that close marks stay readable.
  (c.marks ?? []).forEach((m, i) => {
    const mx = fmt(x(m.atS));
    out.push(
      `<line x1="${mx}" x2="${mx}" y1="${T}" y2="${T + ph}" stroke="${m.color}" stroke-width="1.5" stroke-dasharray="3 3"/>`,
      `<text x="${fmt(x(m.atS) + 4)}" y="${T + 30 + (i % 3) * 14}" fill="${m.color}" font-weight="bold">${esc(m.label)}</text>`,
    );
  });
  // Legend.
  let lx = L;
  const ly = H - 18;
  for (const s of c.series) {
    out.push(
      `<line x1="${lx}" x2="${lx + 24}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      `<text x="${lx + 30}" y="${ly}" fill="#333">${esc(s.name)}</text>`,
    );
    lx += 48 + s.name.length * 6.5;
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
