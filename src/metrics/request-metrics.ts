/**
 * `service_requests_total` and `service_request_duration_seconds`, kept as plain numbers per
 * (path template, method) and rendered only when scraped. Per request this is a few additions
 * into the series' typed arrays — prom-client's labelled counter and histogram cost about a
 * fifth of the route path's CPU, so they are registered here as custom collectors instead. The
 * router looks a mounted endpoint's series up once (`series()`), not per request.
 */
import type { Registry } from 'prom-client';

export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** Answers per status code, counted at the code's index (HTTP's are 100-599; any other goes to a Map). */
const STATUS_SLOTS = 600;

/** One (method, path template): what is counted per request. */
export class RequestSeries {
  readonly statuses = new Float64Array(STATUS_SLOTS);
  readonly otherStatuses = new Map<number, number>();
  readonly buckets = new Float64Array(DURATION_BUCKETS.length + 1); // non-cumulative counts per bucket; the last slot is +Inf
  sum = 0;
  count = 0;
  constructor(
    readonly method: string,
    readonly path: string,
  ) {}

  observe(status: number, seconds: number): void {
    if (status >= 0 && status < STATUS_SLOTS) this.statuses[status]++;
    else this.otherStatuses.set(status, (this.otherStatuses.get(status) ?? 0) + 1);
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]) i++;
    this.buckets[i]++;
    this.sum += seconds;
    this.count++;
  }
}

type MetricValue = { labels: Record<string, string | number>; value: number; metricName?: string };

/** Registers a metric whose values are computed when scraped (prom-client's collector shape). */
export function registerComputed(
  registry: Registry,
  name: string,
  help: string,
  type: 'counter' | 'histogram' | 'gauge',
  values: () => MetricValue[],
): void {
  const get = async () => ({ name, help, type, aggregator: 'sum' as const, values: values() });
  registry.registerMetric({ name, help, type, aggregator: 'sum', get, reset: () => {} } as never);
}

export class RequestMetrics {
  private readonly byPath = new Map<string, Map<string, RequestSeries>>();

  /** The series of (method, path template), created on first use. */
  series(method: string, path: string): RequestSeries {
    let byMethod = this.byPath.get(path);
    if (!byMethod) this.byPath.set(path, (byMethod = new Map()));
    let s = byMethod.get(method);
    if (!s) byMethod.set(method, (s = new RequestSeries(method, path)));
    return s;
  }

  observe(method: string, path: string, status: number, seconds: number): void {
    this.series(method, path).observe(status, seconds);
  }

  private *all(): Iterable<RequestSeries> {
    for (const byMethod of this.byPath.values()) yield* byMethod.values();
  }

  register(registry: Registry): void {
    registerComputed(registry, 'service_requests_total', 'HTTP requests', 'counter', () => {
      const out: MetricValue[] = [];
      for (const s of this.all()) {
        s.statuses.forEach((n, status) => {
          if (n > 0) out.push({ labels: { method: s.method, path: s.path, status_code: status }, value: n });
        });
        for (const [status, n] of s.otherStatuses) out.push({ labels: { method: s.method, path: s.path, status_code: status }, value: n });
      }
      return out;
    });
    const name = 'service_request_duration_seconds';
    registerComputed(registry, name, 'HTTP request latency', 'histogram', () => {
      const out: MetricValue[] = [];
      for (const s of this.all()) {
        let cumulative = 0;
        DURATION_BUCKETS.forEach((le, i) => {
          cumulative += s.buckets[i];
          out.push({ metricName: `${name}_bucket`, labels: { le, method: s.method, path: s.path }, value: cumulative });
        });
        out.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', method: s.method, path: s.path }, value: s.count });
        out.push({ metricName: `${name}_sum`, labels: { method: s.method, path: s.path }, value: s.sum });
        out.push({ metricName: `${name}_count`, labels: { method: s.method, path: s.path }, value: s.count });
      }
      return out;
    });
  }
}
