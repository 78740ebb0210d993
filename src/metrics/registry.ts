/**
 * The Prometheus registry: counters are incremented where events happen; per-rule gauges
 * are computed from the shared tables in collect() at scrape time, never per request or on
 * a timer. Path labels are route templates, never raw paths.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RequestMetrics, registerComputed, type RequestSeries } from './request-metrics.js';

export class Metrics {
  readonly registry = new Registry();
  /** service_requests_total and service_request_duration_seconds. */
  readonly requests = new RequestMetrics();
  /** Routing decisions served and outcomes reported by this process (plain numbers on the hot path). */
  readonly counts = { routed: 0, reported: 0 };
  /** `tenant_id` is set for tenants other than `default` (rule ids are only unique per tenant). */
  readonly failovers: Counter<'rule_id' | 'from_processor' | 'to_processor' | 'tenant_id'>;
  /** Webhook delivery attempts: outcome delivered | failed (all attempts failed) | retried | dropped (over the pending cap). */
  readonly webhookDeliveries: Counter<'event_type' | 'outcome'>;
  /** One observation per evaluation cycle (every SERVICE_EVAL_INTERVAL_MS), not per request. */
  readonly engineCycleSeconds: Histogram;

  constructor() {
    const registers = [this.registry];
    this.requests.register(this.registry);
    registerComputed(this.registry, 'service_transactions_routed_total', 'routing decisions served', 'counter', () => [
      { labels: {}, value: this.counts.routed },
    ]);
    registerComputed(this.registry, 'service_transactions_reported_total', 'outcomes reported', 'counter', () => [
      { labels: {}, value: this.counts.reported },
    ]);
    this.failovers = new Counter({
      name: 'service_failover_events_total',
      help: 'failover events',
      labelNames: ['rule_id', 'from_processor', 'to_processor', 'tenant_id'],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'service_webhook_deliveries_total',
      help: 'webhook delivery attempts by outcome: delivered, failed (all attempts failed), retried (a failed attempt with another to come), dropped (pending beyond the per-webhook cap of 1,000)',
      labelNames: ['event_type', 'outcome'],
      registers,
    });
    this.engineCycleSeconds = new Histogram({
      name: 'service_engine_cycle_duration_seconds',
      help: 'evaluation cycle duration in seconds, from the tick until every tenant\'s evaluation finished',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
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

  /** Where answered requests of (method, path template) are counted. */
  requestSeries(method: string, path: string): RequestSeries {
    return this.requests.series(method, path);
  }
}
