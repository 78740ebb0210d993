/**
 * Per-rule gauges (spec 4.9), computed from the shared tables when scraped. Labels are
 * rule_id and processor_id; `tenant_id` is added for tenants other than `default`, since
 * rule ids are only unique within a tenant.
 */
import {
  MIN_SAMPLES_P95,
  PF_BANDIT_WEIGHT,
  PF_FAILURE_PROB,
  PF_LAST_EVAL_MS,
  PF_P95_LATENCY,
  PF_SAMPLE_COUNT,
  PF_STATUS,
  PF_SUCCESS_RATE,
  STATUS_GAUGE,
} from '../shared/layout.js';
import type { SharedTables } from '../shared/tables.js';
import type { TenantRegistry } from '../tenants/registry.js';
import { tierOf } from '../tenants/tenant.js';
import { processorRow } from '../engine/health-view.js';
import type { Gauge } from 'prom-client';
import type { Metrics } from './registry.js';

const LABELS = ['rule_id', 'processor_id', 'tenant_id'];

type RowReader = (procF64: Float64Array, o: number) => number;

export function registerEngineGauges(metrics: Metrics, tables: SharedTables, tenants: TenantRegistry, defaultTier: number): void {
  const perProcessor = (name: string, help: string, read: RowReader) =>
    metrics.gauge(name, help, LABELS, (g: Gauge<string>) => {
      g.reset();
      for (const t of tenants.all()) {
        for (const rule of t.rules.values()) {
          const r = rule.record;
          const same = r.primary_id === r.secondary_id;
          for (const k of same ? ([0] as const) : ([0, 1] as const)) {
            const { procF64, o } = processorRow(tables, rule.slot, k);
            const v = read(procF64, o);
            if (Number.isNaN(v)) continue;
            const labels: Record<string, string> = { rule_id: r.rule_id, processor_id: k === 0 ? r.primary_id : r.secondary_id };
            if (t.id !== 'default') labels.tenant_id = t.id;
            g.set(labels, v);
          }
        }
      }
    });

  perProcessor('service_processor_health_status', 'processor health: 1 healthy, 0.5 degraded, 0 failed_over', (f, o) => STATUS_GAUGE[f[o + PF_STATUS]] ?? 1);
  perProcessor('service_processor_success_rate', 'success rate, 0 to 1 (1 before the first outcome)', (f, o) =>
    f[o + PF_SAMPLE_COUNT] > 0 && !Number.isNaN(f[o + PF_SUCCESS_RATE]) ? f[o + PF_SUCCESS_RATE] : 1,
  );
  perProcessor('service_processor_latency_p95', 'p95 latency in ms (absent below 50 samples)', (f, o) =>
    f[o + PF_SAMPLE_COUNT] >= MIN_SAMPLES_P95 ? f[o + PF_P95_LATENCY] : NaN,
  );
  // Rows never evaluated (no traffic yet) have no prediction or allocation: absent.
  const evaluated = (f: Float64Array, o: number, v: number) => (f[o + PF_LAST_EVAL_MS] > 0 ? v : NaN);
  perProcessor('service_processor_failure_probability', 'Tier 2 failure probability, 0 to 1 (absent when prediction is off)', (f, o) =>
    evaluated(f, o, f[o + PF_FAILURE_PROB]),
  );
  perProcessor('service_bandit_weight', 'Tier 3 allocation, 0 to 1 (absent when the bandit is off)', (f, o) => evaluated(f, o, f[o + PF_BANDIT_WEIGHT]));

  // One deployment-wide tier: the default tenant's when it exists, else the start-up tier.
  // Per-tenant tiers are in /v1/stats and /v1/config/tiers.
  metrics.gauge('service_engine_tier', 'current engine tier, 1, 2 or 3', [], (g) => {
    const d = tenants.find('default');
    g.set(d ? tierOf(d.settings) : defaultTier);
  });
}
