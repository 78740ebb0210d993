/**
 * The shared-memory layout: every offset that the front thread and the worker pool
 * exchange through SharedArrayBuffers is named here, and only here.
 *
 * ```
 *  rule segment (one SAB per RULES_PER_SEGMENT rules)            window segment (one SAB per WINDOWS_PER_SEGMENT)
 *  ┌──────────────────────────────┐                              ┌────────────────────────────────────────────┐
 *  │ ruleI32  [rule][RI_*]        │ seqlock, decision source,    │ countHdr [win][COUNT_BUCKETS][CB_*]  1 s    │
 *  │ ruleF64  [rule][RF_*]        │ weights the route path reads │ latEpoch [win][LAT_BUCKETS]          5 s    │
 *  │ procF64  [rule*2+k][PF_*]    │ health + engine state (k=0   │ latSum   [win][LAT_BUCKETS]                 │
 *  │                              │ primary, k=1 secondary)      │ latBins  [win][LAT_BUCKETS][LAT_BINS] u16   │
 *  └──────────────────────────────┘                              └────────────────────────────────────────────┘
 * ```
 *
 * Who writes what (a single writer per field, so plain stores suffice except where noted):
 * - front thread: rule creation fields, window buckets (outcomes), consecutive-failure counters;
 * - worker (the one task running a tenant's shard): status, published health, decision fields,
 *   engine state (Tier 1 bookkeeping, GRU hidden state, bandit posteriors).
 * The decision fields the route path reads together (effective weight, source, probabilities)
 * are published under a seqlock (`RI_SEQ`): the writer makes it odd, writes, makes it even;
 * a reader retries while it is odd or changed, so a route never sees half an update.
 */

export const RULES_PER_SEGMENT = 1024;
export const RULE_SHIFT = 10; // log2(RULES_PER_SEGMENT)
export const RULE_MASK = RULES_PER_SEGMENT - 1;

// ── per rule, Int32 fields ───────────────────────────────────────────────────────────────
export const RI_SEQ = 0; // seqlock version of the decision fields (Atomics)
export const RI_ACTIVE = 1; // 1 while the slot holds a live rule
export const RI_DECISION_SOURCE = 2; // DecisionSource code
export const RI_WINDOW_PRIMARY = 3; // window index of the primary's outcomes, -1 until first outcome
export const RI_WINDOW_SECONDARY = 4; // window index of the secondary (same as primary for a self-fallback rule)
export const RI_RUN_PRIMARY = 5; // consecutive technical failures of the primary (front writes, Atomics)
export const RI_RUN_SECONDARY = 6;
export const RI_GENERATION = 7; // bumped each time the slot is reused, so stale task results are ignored
export const RI_COMMAND = 8; // ManualCommand an operator asked for (front writes, the worker takes it with Atomics.exchange)
/**
 * Cluster mode: the other replicas' current runs of consecutive technical failures of the
 * processor, summed (front thread writes as their outcome deltas arrive, Atomics). The worker
 * judges the run length on local + remote, so a burst spread over replicas trips as in one process.
 */
export const RI_REMOTE_RUN_PRIMARY = 9;
export const RI_REMOTE_RUN_SECONDARY = 10;
export const RULE_I32_STRIDE = 12;

// ── per rule, Float64 fields ─────────────────────────────────────────────────────────────
export const RF_CONFIG_PRIMARY_WEIGHT = 0; // the weight the operator configured
export const RF_PRIMARY_SHARE = 1; // probability that a route picks the primary (engine output)
export const RF_FAILPROB_PRIMARY = 2; // Tier 2 calibrated failure probability, NaN when disabled
export const RF_FAILPROB_SECONDARY = 3;
export const RF_SAME_PROCESSOR = 4; // 1 when primary and secondary are the same processor
/**
 * Traffic counters for the per-rule metrics, front thread only (plain increments on the hot
 * path, read at scrape time): routed decisions per processor (k = 0 primary, 1 secondary) and
 * reported outcomes per processor and result (RF_OUTCOMES + k * OUTCOME_RESULTS + result).
 */
export const RF_ROUTED = 8; // + k
export const RF_OUTCOMES = 10; // + k * OUTCOME_RESULTS + OutcomeResult
export const OUTCOME_RESULTS = 3;
export const OUTCOME_RESULT_NAMES = ['success', 'decline', 'technical'] as const;
export const RULE_F64_STRIDE = 16;

export const enum DecisionSource {
  Rules = 0,
  Prediction = 1,
  Mab = 2,
}
export const DECISION_SOURCE_NAMES = ['rules', 'prediction', 'mab'] as const;

/** Operator commands carried by RI_COMMAND to the next evaluation of the rule. */
export const enum ManualCommand {
  None = 0,
  Failover = 1, // the primary goes failed_over now, as Tier 1 would (reason "manual")
  Recover = 2, // failed_over processors recover now; the primary gets its configured weight back
}

// ── per processor slot (two per rule), Float64 fields ────────────────────────────────────
export const PROCS_PER_RULE = 2;
export const PF_STATUS = 0; // ProcessorStatus code
export const PF_SUCCESS_RATE = 1; // published health, NaN when no samples
export const PF_ERROR_RATE = 2;
export const PF_AVG_LATENCY = 3;
export const PF_P95_LATENCY = 4; // NaN with no sample in the health horizon (shown as 0)
export const PF_P99_LATENCY = 5; // NaN with no sample in the health horizon (shown as 0)
export const PF_SAMPLE_COUNT = 6;
export const PF_FAILURE_PROB = 7; // NaN when prediction is disabled
export const PF_BANDIT_WEIGHT = 8; // NaN when the bandit is disabled
export const PF_DECLINE_RATE = 9;
export const PF_STATUS_SINCE_MS = 10;
export const PF_LAST_EVAL_MS = 11;
/** Tier 1 state-machine bookkeeping: PF_T1_BASE .. PF_T1_BASE + PF_T1_LEN - 1. */
export const PF_T1_BASE = 12;
export const PF_T1_LEN = 12;
/** Tier 3 posterior: alpha, beta, updatedAtMs, plus room. */
export const PF_BANDIT_BASE = 24;
export const PF_BANDIT_LEN = 6;
/** Tier 2 GRU hidden state and feature history. */
export const PF_GRU_BASE = 30;
export const PF_GRU_LEN = 34;
export const PROC_F64_STRIDE = 64;

export const enum ProcessorStatus {
  Healthy = 0,
  Degraded = 1,
  FailedOver = 2,
}
export const STATUS_NAMES = ['healthy', 'degraded', 'failed_over'] as const;
export type StatusName = (typeof STATUS_NAMES)[number];
/** The value `service_processor_health_status` carries for each status (spec 4.9). */
export const STATUS_GAUGE = [1, 0.5, 0] as const;

// ── outcome windows ──────────────────────────────────────────────────────────────────────
/**
 * Counts are kept in 1-second buckets (enough resolution to see a partial outage within
 * seconds), latency sketches in 5-second buckets (a sketch is 40x larger than a count row).
 * Each bucket carries the epoch it belongs to; the front thread resets a bucket lazily when
 * it first writes into a new epoch (epoch set to -1 while resetting, Atomics), so readers
 * ignore buckets that are stale or mid-reset.
 */
export const WINDOWS_PER_SEGMENT = 128;
export const WINDOW_SHIFT = 7;
export const WINDOW_MASK = WINDOWS_PER_SEGMENT - 1;

export const COUNT_BUCKET_MS = 1000;
export const COUNT_BUCKETS = 64; // 64 s of history
export const CB_EPOCH = 0;
export const CB_SUCCESS = 1;
export const CB_DECLINE = 2; // failed, issuer decline: counts against success rate, not the processor
export const CB_TECH_ERROR = 3; // failed, technical: a processor error
export const CB_TIMEOUT = 4; // subset of CB_TECH_ERROR
export const CB_STRIDE = 5;

export const LAT_BUCKET_MS = 5000;
export const LAT_BUCKETS = 12; // 60 s of history
/**
 * Log-scaled latency bins: bin i holds values in (GAMMA^(i-1), GAMMA^i] ms. With GAMMA = 1.04
 * the bin's representative value 2·GAMMA^i/(GAMMA+1) is within 1.96% of any value in it,
 * so percentiles are within 2% of the exact order statistic. 280 bins reach ~57 s; slower
 * values land in the last bin.
 */
export const LAT_GAMMA = 1.04;
export const LAT_BINS = 280;

/** Byte sizes, so both sides build identical views. */
export function ruleSegmentBytes(): number {
  const n = RULES_PER_SEGMENT;
  return (
    n * RULE_I32_STRIDE * 4 + n * RULE_F64_STRIDE * 8 + n * PROCS_PER_RULE * PROC_F64_STRIDE * 8
  );
}

export interface RuleSegmentViews {
  ruleI32: Int32Array;
  ruleF64: Float64Array;
  procF64: Float64Array;
}

export function ruleSegmentViews(sab: SharedArrayBuffer): RuleSegmentViews {
  const n = RULES_PER_SEGMENT;
  const i32Bytes = n * RULE_I32_STRIDE * 4;
  const f64Bytes = n * RULE_F64_STRIDE * 8;
  return {
    ruleI32: new Int32Array(sab, 0, n * RULE_I32_STRIDE),
    ruleF64: new Float64Array(sab, i32Bytes, n * RULE_F64_STRIDE),
    procF64: new Float64Array(sab, i32Bytes + f64Bytes, n * PROCS_PER_RULE * PROC_F64_STRIDE),
  };
}

export function windowSegmentBytes(): number {
  const n = WINDOWS_PER_SEGMENT;
  return (
    n * COUNT_BUCKETS * CB_STRIDE * 4 + n * LAT_BUCKETS * 4 + n * LAT_BUCKETS * 8 + n * LAT_BUCKETS * LAT_BINS * 2
  );
}

export interface WindowSegmentViews {
  countHdr: Int32Array;
  latEpoch: Int32Array;
  latSum: Float64Array;
  latBins: Uint16Array;
}

export function windowSegmentViews(sab: SharedArrayBuffer): WindowSegmentViews {
  const n = WINDOWS_PER_SEGMENT;
  const countBytes = n * COUNT_BUCKETS * CB_STRIDE * 4;
  const epochBytes = n * LAT_BUCKETS * 4;
  const sumBytes = n * LAT_BUCKETS * 8;
  // countBytes and epochBytes are multiples of 8 (n is a multiple of 2), so latSum is aligned.
  return {
    countHdr: new Int32Array(sab, 0, n * COUNT_BUCKETS * CB_STRIDE),
    latEpoch: new Int32Array(sab, countBytes, n * LAT_BUCKETS),
    latSum: new Float64Array(sab, countBytes + epochBytes, n * LAT_BUCKETS),
    latBins: new Uint16Array(sab, countBytes + epochBytes + sumBytes, n * LAT_BUCKETS * LAT_BINS),
  };
}

/** Latency (ms) → bin index. */
const LOG_GAMMA = Math.log(LAT_GAMMA);
export function latencyBin(ms: number): number {
  if (!(ms > 1)) return 0;
  const i = Math.ceil(Math.log(ms) / LOG_GAMMA);
  return i < LAT_BINS ? i : LAT_BINS - 1;
}
/** Bin index → representative latency (ms), the relative midpoint of the bin. */
export function binValue(i: number): number {
  return i === 0 ? 1 : (2 * Math.pow(LAT_GAMMA, i)) / (LAT_GAMMA + 1);
}
