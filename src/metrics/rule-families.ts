/**
 * The per-rule metric families (spec 4.9 plus the traffic counters) in the text exposition
 * format, written straight from the shared tables. Two callers render them: the metrics render
 * thread (render-worker.ts, the normal case, off the front thread) and the front thread in time
 * slices when that thread is down (scrape-renderer.ts). Both give the same input, a snapshot of
 * each tenant's rule list (`RuleColumns`, label-catalogue.ts), so both write the same text.
 *
 * Labels are rule_id and processor_id; `tenant_id` is added for tenants other than `default`,
 * since rule ids are only unique within a tenant. Ids need no escaping: rule, processor and
 * tenant ids are limited to [A-Za-z0-9_.:-].
 */
import {
  PF_BANDIT_WEIGHT,
  PF_ERROR_RATE,
  PF_FAILURE_PROB,
  PF_LAST_EVAL_MS,
  RI_ACTIVE,
  RI_GENERATION,
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
  type RuleSegmentViews,
} from '../shm/layout.js';
import { shownFailureProbability } from '../tiers/foresight/prior.js';
import { readableRowOffset, readableRows } from '../shm/processor-rows.js';
import { ruleF64Base, ruleI32Base, ruleSegment } from '../shm/slots.js';

/**
 * One tenant's rules, in the tenant's rule order, as columns (cheap to copy to a thread: no
 * rule objects). `generations` is each slot's RI_GENERATION when the snapshot was taken: a rule
 * deleted since (its slot freed or reused by another rule) is skipped, never shown with another
 * rule's numbers. A rule's processors are indexes into `processorIds`, the tenant's distinct
 * ones: a copy posted to the render thread holds each id once, not twice per rule (at 100,000
 * rules, 200,000 strings and two arrays of their references, ~6 MB of that thread's heap).
 */
export interface RuleColumns {
  tenantId: string;
  slots: Int32Array;
  generations: Int32Array;
  ruleIds: string[];
  processorIds: string[];
  primary: Int32Array;
  secondary: Int32Array;
}

/** What one rendering needs per tenant: its rules and whether Tier 2 is on (read at each scrape). */
export interface RenderTenant {
  rules: RuleColumns;
  predictionEnabled: boolean;
}

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

/** Every processor of every live rule; yields one reused view (no allocation per row). */
function* processors(segs: readonly RuleSegmentViews[], tenants: readonly RenderTenant[]): Generator<ProcessorView> {
  const p: ProcessorView = { procF64: new Float64Array(0), o: 0, ruleF64: new Float64Array(0), fb: 0, k: 0, n: 2, seen: false, predictionEnabled: false, labels: '' };
  for (const t of tenants) {
    p.predictionEnabled = t.predictionEnabled;
    const c = t.rules;
    const tenantLabel = c.tenantId === 'default' ? '' : `,tenant_id="${c.tenantId}"`;
    for (let i = 0; i < c.slots.length; i++) {
      const slot = c.slots[i];
      const seg = ruleSegment(segs, slot);
      const ib = ruleI32Base(slot);
      if (seg.ruleI32[ib + RI_ACTIVE] !== 1 || seg.ruleI32[ib + RI_GENERATION] !== c.generations[i]) continue; // deleted since the snapshot
      p.n = c.primary[i] === c.secondary[i] ? 1 : 2;
      // Rows never written are read as the zeros they hold, from a stand-in: a scrape reads
      // no page of an idle rule's rows (processor-rows.ts).
      p.procF64 = readableRows(seg, slot);
      p.ruleF64 = seg.ruleF64;
      p.fb = ruleF64Base(slot);
      for (let k = 0 as 0 | 1; k < p.n; k++) {
        p.k = k;
        p.o = readableRowOffset(p.procF64, slot, k);
        p.seen = seg.ruleI32[ib + (k === 0 ? RI_WINDOW_PRIMARY : RI_WINDOW_SECONDARY)] >= 0 || p.procF64[p.o + PF_LAST_EVAL_MS] > 0;
        p.labels = `rule_id="${c.ruleIds[i]}",processor_id="${c.processorIds[k === 0 ? c.primary[i] : c.secondary[i]]}"${tenantLabel}`;
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
 * Processors rendered between two chunks of ruleFamilyChunks (~0.1-0.3 ms of work each): small
 * enough that a front-thread rendering can end a time slice close to its budget (sliced-render.ts).
 */
export const PROCESSORS_PER_CHUNK = 256;

/**
 * The per-rule gauges and counters, in chunks of about PROCESSORS_PER_CHUNK processors.
 * Only processors that have had an outcome (a window) or an evaluation are exported as
 * gauges, and counters only once non-zero: a rule that never saw traffic has nothing to
 * report, and 100,000 idle rules would otherwise be 400,000 constant series (32 MB per
 * scrape). The exception is the failure probability while Tier 2 is on: the contract is a
 * number from the moment a rule exists (its prior until then). (prom-client's labelled gauges
 * allocated hundreds of MB per scrape at 100,000 rules, hence the text is written directly.)
 */
export function* ruleFamilyChunks(segs: readonly RuleSegmentViews[], tenants: readonly RenderTenant[]): Generator<string> {
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
    for (const p of processors(segs, tenants)) {
      if (g.everyRule ? p.predictionEnabled : p.seen) {
        const v = g.read(p.procF64, p.o, p.predictionEnabled);
        if (!Number.isNaN(v)) parts.push(`${g.name}{${p.labels}} ${v}\n`);
      }
      if (full()) yield take();
    }
  }
  const routed = 'service_processor_routed_total';
  parts.push(`# HELP ${routed} routing decisions that chose this processor of this rule\n# TYPE ${routed} counter\n`);
  for (const p of processors(segs, tenants)) {
    const v = counterValue(p, (k) => RF_ROUTED + k);
    if (v > 0) parts.push(`${routed}{${p.labels}} ${v}\n`);
    if (full()) yield take();
  }
  const outcomes = 'service_processor_outcomes_total';
  parts.push(`# HELP ${outcomes} outcomes reported for this processor of this rule, by result: success, decline (issuer), technical (processor error or timeout)\n# TYPE ${outcomes} counter\n`);
  for (const p of processors(segs, tenants)) {
    for (let res = 0; res < OUTCOME_RESULTS; res++) {
      const v = counterValue(p, (k) => RF_OUTCOMES + k * OUTCOME_RESULTS + res);
      if (v > 0) parts.push(`${outcomes}{${p.labels},result="${OUTCOME_RESULT_NAMES[res]}"} ${v}\n`);
    }
    if (full()) yield take();
  }
  yield take();
}
