/**
 * Per-rule gauges (spec 4.9), computed from the shared tables when scraped. Labels are
 * rule_id and processor_id; `tenant_id` is added for tenants other than `default`, since
 * rule ids are only unique within a tenant.
 */
import {
  PF_BANDIT_WEIGHT,
  PF_ERROR_RATE,
  PF_FAILURE_PROB,
  PF_LAST_EVAL_MS,
  RI_WINDOW_PRIMARY,
  RI_WINDOW_SECONDARY,
  OUTCOME_RESULT_NAMES,
  OUTCOME_RESULTS,
  RF_OUTCOMES,
  RF_ROUTED,
  PF_P95_LATENCY,
  PF_SAMPLE_COUNT,
  PF_STATUS,
  PF_SUCCESS_RATE,
  STATUS_GAUGE,
} from '../shm/layout.js';
import type { SharedTables } from '../shm/tables.js';
import type { TenantRegistry } from '../tenants/registry.js';
import { tierOf } from '../tenants/tenant.js';
import type { Metrics } from './registry.js';
import { shownFailureProbability } from '../tiers/foresight/prior.js';
import { processorRowOffset, ruleF64Base, ruleI32Base, ruleSegment } from '../shm/slots.js';

/** `predictionEnabled`: the rule's tenant has Tier 2 on. NaN = no sample. */
type RowReader = (procF64: Float64Array, o: number, predictionEnabled: boolean) => number;

interface PerProcessorGauge {
  name: string;
  help: string;
  read: RowReader;
  /** Exported for every processor of every rule, traffic or not (else only once it has had an outcome). */
  everyRule?: boolean;
}

// Rows never evaluated (no traffic yet) have no prediction or allocation: absent.
const evaluated = (f: Float64Array, o: number, v: number) => (f[o + PF_LAST_EVAL_MS] > 0 ? v : NaN);

const GAUGES: PerProcessorGauge[] = [
  { name: 'service_processor_health_status', help: 'processor health: 1 healthy, 0.5 degraded, 0 failed_over', read: (f, o) => STATUS_GAUGE[f[o + PF_STATUS]] ?? 1 },
  {
    name: 'service_processor_success_rate',
    help: 'success rate, 0 to 1 (1 before the first outcome)',
    read: (f, o) => (f[o + PF_SAMPLE_COUNT] > 0 && !Number.isNaN(f[o + PF_SUCCESS_RATE]) ? f[o + PF_SUCCESS_RATE] : 1),
  },
  {
    name: 'service_processor_latency_p95',
    help: 'p95 latency in ms over the last 60 s (0 with no sample in that time)',
    read: (f, o) => (f[o + PF_SAMPLE_COUNT] > 0 && !Number.isNaN(f[o + PF_P95_LATENCY]) ? f[o + PF_P95_LATENCY] : 0),
  },
  {
    name: 'service_processor_failure_probability',
    help: 'Tier 2 (Foresight) failure probability, 0 to 1, for every rule while prediction is on (the model prior before the first evaluation); absent when it is off',
    read: (f, o, predictionEnabled) => shownFailureProbability(evaluated(f, o, f[o + PF_FAILURE_PROB]), predictionEnabled) ?? NaN,
    everyRule: true,
  },
  {
    name: 'service_processor_error_ratio',
    help: 'technical errors / all outcomes over the last 60 s (error_rate in /v1/health), 0 to 1 (0 before the first outcome)',
    read: (f, o) => (f[o + PF_SAMPLE_COUNT] > 0 && !Number.isNaN(f[o + PF_ERROR_RATE]) ? f[o + PF_ERROR_RATE] : 0),
  },
  { name: 'service_bandit_weight', help: 'Tier 3 (Autopilot) allocation, 0 to 1 (absent when Autopilot is off)', read: (f, o) => evaluated(f, o, f[o + PF_BANDIT_WEIGHT]) },
];

/** One processor of one rule, as the renderers see it; reused across the loop (no allocation per row). */
interface ProcessorView {
  procF64: Float64Array;
  /** Offset of the processor's row in procF64. */
  o: number;
  ruleF64: Float64Array;
  /** Offset of the rule's row in ruleF64. */
  fb: number;
  k: 0 | 1;
  /** 1 for a self-fallback rule (both sides are one processor), else 2. */
  n: number;
  seen: boolean;
  /** The rule's tenant has Tier 2 on. */
  predictionEnabled: boolean;
  /** `rule_id="…",processor_id="…"[,tenant_id="…"]` */
  labels: string;
}

/** Every processor of every rule; yields one reused view (no allocation per row). */
function* processors(tables: SharedTables, tenants: TenantRegistry): Generator<ProcessorView> {
  const p: ProcessorView = { procF64: new Float64Array(0), o: 0, ruleF64: new Float64Array(0), fb: 0, k: 0, n: 2, seen: false, predictionEnabled: false, labels: '' };
  for (const t of tenants.all()) {
    p.predictionEnabled = t.settings.predictionEnabled;
    const tenantLabel = t.id === 'default' ? '' : `,tenant_id="${t.id}"`;
    for (const rule of t.rules.values()) {
      const r = rule.record;
      const seg = ruleSegment(tables.ruleSegs, rule.slot);
      const ib = ruleI32Base(rule.slot);
      p.n = r.primary_id === r.secondary_id ? 1 : 2;
      p.procF64 = seg.procF64;
      p.ruleF64 = seg.ruleF64;
      p.fb = ruleF64Base(rule.slot);
      for (let k = 0 as 0 | 1; k < p.n; k++) {
        p.k = k;
        p.o = processorRowOffset(rule.slot, k);
        p.seen = seg.ruleI32[ib + (k === 0 ? RI_WINDOW_PRIMARY : RI_WINDOW_SECONDARY)] >= 0 || p.procF64[p.o + PF_LAST_EVAL_MS] > 0;
        p.labels = `rule_id="${r.rule_id}",processor_id="${k === 0 ? r.primary_id : r.secondary_id}"${tenantLabel}`;
        yield p;
      }
    }
  }
}

/** A per-processor traffic counter; a self-fallback rule's one processor sums both sides. */
function counterValue(p: ProcessorView, field: (k: number) => number): number {
  return p.n === 1 ? p.ruleF64[p.fb + field(0)] + p.ruleF64[p.fb + field(1)] : p.ruleF64[p.fb + field(p.k)];
}

/**
 * The per-rule gauges and counters in the text exposition format, written directly from the
 * shared tables (prom-client's labelled gauges allocated hundreds of MB per scrape at 100,000
 * rules). Only processors that have had an outcome (a window) or an evaluation are exported
 * as gauges, and counters only once non-zero: a rule that never saw traffic has nothing to
 * report, and 100,000 idle rules would otherwise be 400,000 constant series (32 MB per
 * scrape). The exception is the failure probability while Tier 2 is on: the contract is a
 * number from the moment a rule exists (its prior until then). Ids need no escaping: rule, processor and tenant ids are limited to [A-Za-z0-9_.:-].
 */
export function renderEngineGauges(tables: SharedTables, tenants: TenantRegistry): string {
  return [...engineGaugeChunks(tables, tenants)].join('');
}

/**
 * Processors rendered between two chunks of engineGaugeChunks (~0.1-0.3 ms of work each): small
 * enough that the scrape cache can end a time slice close to its budget (scrape-cache.ts).
 */
export const PROCESSORS_PER_CHUNK = 256;

/**
 * The same text in chunks of about PROCESSORS_PER_CHUNK processors, so that a scrape can be
 * rendered in time slices between which the event loop serves routes (see scrape-cache.ts).
 */
export function* engineGaugeChunks(tables: SharedTables, tenants: TenantRegistry): Generator<string> {
  let parts: string[] = [];
  let rows = 0;
  const full = () => ++rows % PROCESSORS_PER_CHUNK === 0;
  const take = () => {
    const text = parts.join('');
    parts = [];
    return text;
  };
  for (const g of GAUGES) {
    parts.push(`# HELP ${g.name} ${g.help}\n# TYPE ${g.name} gauge\n`);
    for (const p of processors(tables, tenants)) {
      if (g.everyRule ? p.predictionEnabled : p.seen) {
        const v = g.read(p.procF64, p.o, p.predictionEnabled);
        if (!Number.isNaN(v)) parts.push(`${g.name}{${p.labels}} ${v}\n`);
      }
      if (full()) yield take();
    }
  }
  const routed = 'service_processor_routed_total';
  parts.push(`# HELP ${routed} routing decisions that chose this processor of this rule\n# TYPE ${routed} counter\n`);
  for (const p of processors(tables, tenants)) {
    const v = counterValue(p, (k) => RF_ROUTED + k);
    if (v > 0) parts.push(`${routed}{${p.labels}} ${v}\n`);
    if (full()) yield take();
  }
  const outcomes = 'service_processor_outcomes_total';
  parts.push(`# HELP ${outcomes} outcomes reported for this processor of this rule, by result: success, decline (issuer), technical (processor error or timeout)\n# TYPE ${outcomes} counter\n`);
  for (const p of processors(tables, tenants)) {
    for (let res = 0; res < OUTCOME_RESULTS; res++) {
      const v = counterValue(p, (k) => RF_OUTCOMES + k * OUTCOME_RESULTS + res);
      if (v > 0) parts.push(`${outcomes}{${p.labels},result="${OUTCOME_RESULT_NAMES[res]}"} ${v}\n`);
    }
    if (full()) yield take();
  }
  yield take();
}

export function registerEngineGauges(metrics: Metrics, tenants: TenantRegistry, defaultTier: number): void {
  // One deployment-wide tier: the default tenant's when it exists, else the start-up tier.
  // Per-tenant tiers are in /v1/stats and /v1/config/tiers.
  metrics.gauge('service_engine_tier', 'current engine tier, 1, 2 or 3', [], (g) => {
    const d = tenants.find('default');
    g.set(d ? tierOf(d.settings) : defaultTier);
  });
}
