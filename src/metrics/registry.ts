/**
 * The Prometheus registry: counters are incremented where events happen; per-rule gauges
 * are computed from the shared tables in collect() at scrape time, never per request or on
 * a timer. Path labels are route templates, never raw paths.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'path' | 'status_code'>;
  readonly requestDuration: Histogram<'method' | 'path'>;
  readonly routed: Counter;
  readonly reported: Counter;
  /** `tenant_id` is set for tenants other than `default` (rule ids are only unique per tenant). */
  readonly failovers: Counter<'rule_id' | 'from_processor' | 'to_processor' | 'tenant_id'>;
  /** Webhook delivery attempts: outcome delivered | failed (all attempts failed) | retried. */
  readonly webhookDeliveries: Counter<'event_type' | 'outcome'>;
  private readonly requestChildren = new Map<string, { inc(): void }>();
  private readonly durationChildren = new Map<string, { observe(v: number): void }>();

  constructor() {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'service_requests_total',
      help: 'HTTP requests',
      labelNames: ['method', 'path', 'status_code'],
      registers,
    });
    this.requestDuration = new Histogram({
      name: 'service_request_duration_seconds',
      help: 'HTTP request latency',
      labelNames: ['method', 'path'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.routed = new Counter({ name: 'service_transactions_routed_total', help: 'routing decisions served', registers });
    this.reported = new Counter({ name: 'service_transactions_reported_total', help: 'outcomes reported', registers });
    this.failovers = new Counter({
      name: 'service_failover_events_total',
      help: 'failover events',
      labelNames: ['rule_id', 'from_processor', 'to_processor', 'tenant_id'],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'service_webhook_deliveries_total',
      help: 'webhook delivery attempts by outcome: delivered, failed (all attempts failed), retried (a failed attempt with another to come)',
      labelNames: ['event_type', 'outcome'],
      registers,
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'service_process_' });
  }

  /** Gauges whose value is read at scrape time. */
  gauge(name: string, help: string, labelNames: string[], collect: (g: Gauge<string>) => void): Gauge<string> {
    return new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        collect(this);
      },
    });
  }

  /** Records one answered request; label children are cached so this stays cheap. */
  observeRequest(method: string, path: string, status: number, seconds: number): void {
    const key = `${method} ${path} ${status}`;
    let c = this.requestChildren.get(key);
    if (!c) {
      c = this.requests.labels(method, path, String(status));
      this.requestChildren.set(key, c);
    }
    c.inc();
    const dkey = `${method} ${path}`;
    let d = this.durationChildren.get(dkey);
    if (!d) {
      d = this.requestDuration.labels(method, path);
      this.durationChildren.set(dkey, d);
    }
    d.observe(seconds);
  }
}
